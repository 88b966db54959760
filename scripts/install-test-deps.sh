#!/bin/sh
# Installs the system packages the test suite needs: bubblewrap (the bot
# sandbox), chromium and chromium-driver (the report's browser test), tmux
# (terminal tests), gcc and the C library headers (the C bots are built by the
# tests), node (the JavaScript bot), a JDK (the Java bot is built with javac
# by the tests).  Only what is missing is installed; sudo is used when not
# root.  Python packages come from pip: see the README's test command.
set -eu
missing=""
command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
command -v chromedriver >/dev/null 2>&1 || missing="$missing chromium-driver"
command -v tmux >/dev/null 2>&1 || missing="$missing tmux"
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v node >/dev/null 2>&1 || missing="$missing nodejs"
command -v javac >/dev/null 2>&1 || missing="$missing default-jdk-headless"
[ -f /usr/include/stdio.h ] || missing="$missing libc6-dev"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
echo "installing system packages:$missing"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
