#!/bin/sh
# Installs the real peers the tests talk to when they are missing: redis-server (Sentinel runs
# from the same binary), prosody for the Jabber tests, prometheus (promtool, and the server) for the
# metrics lint, the alerting rules' tests and the Prometheus intake test, prometheus-alertmanager
# (with amtool) for the Alertmanager tests, nagios4-core for the real-Nagios receiver test,
# python3-icalendar to parse the on-call calendar feeds, skopeo and adduser for the image and
# package tests, chromium for the web UI's browser tests. The SMTP tests need nothing installed: their server is Go
# (internal/testing/testsmtp, built with the go tool the tests run under). Needs root for
# apt-get; otherwise prints the exact command and fails, so a test run never silently skips the
# integration tests.
set -eu
missing=""
command -v redis-server >/dev/null 2>&1 || missing="$missing redis-server"
command -v prosody >/dev/null 2>&1 || missing="$missing prosody"
command -v promtool >/dev/null 2>&1 || missing="$missing prometheus"
[ -x /usr/sbin/nagios4 ] || missing="$missing nagios4-core"
command -v chromium >/dev/null 2>&1 || missing="$missing chromium"
# skopeo reads the container image as a second, independent reader (cmd/flapjack-package)
command -v skopeo >/dev/null 2>&1 || missing="$missing skopeo"
# the Debian package depends on adduser (its postinst creates the flapjack user); dpkg -i in the
# package test does not fetch dependencies
[ -x /usr/sbin/adduser ] || missing="$missing adduser"
# a real Prometheus (above) and Alertmanager with amtool for the Prometheus intake and silences
command -v prometheus >/dev/null 2>&1 || missing="$missing prometheus"
command -v prometheus-alertmanager >/dev/null 2>&1 || missing="$missing prometheus-alertmanager"
command -v amtool >/dev/null 2>&1 || missing="$missing prometheus-alertmanager"
# the real nsca daemon and send_nsca client for the NSCA receiver test
[ -x /usr/sbin/nsca ] || missing="$missing nsca"
[ -x /usr/sbin/send_nsca ] || missing="$missing nsca-client"
# a real calendar parser for the on-call calendar feeds (oncall's tests run Debian's python3)
/usr/bin/python3 -c 'import icalendar' >/dev/null 2>&1 || missing="$missing python3-icalendar"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "installing test dependencies:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q $missing >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q $missing >/dev/null; }
	exit 0
fi
echo "tests need:$missing" >&2
echo "install them with: sudo apt-get install -y$missing" >&2
exit 1
