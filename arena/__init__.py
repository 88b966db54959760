"""Totem Arena: runs bots against each other under the engine's rules.

Data flows one way: config -> schedule -> executor -> referee -> bot processes,
and every finished GameRecord goes to the results store, from which ratings
and standings are computed.
"""

__version__ = "0.1.0"
