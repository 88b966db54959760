"""Never reads its stdin and never writes anything: it just sleeps, so the
arena's writes fill the pipe."""

import time

while True:
    time.sleep(3600)
