"""Reads an RFC 5545 file with the icalendar library and prints its events as JSON, for the Go
tests to compare with the shifts the calendar was written from. Exits non-zero when the library
reports a problem with any component."""
import json
import sys

import icalendar

with open(sys.argv[1], "rb") as f:
    cal = icalendar.Calendar.from_ical(f.read())

problems = [(c.name, c.errors) for c in cal.walk() if getattr(c, "errors", None)]
if problems:
    sys.exit("icalendar reports problems: %r" % problems)

events = []
for ev in cal.walk("VEVENT"):
    events.append({
        "uid": str(ev.get("uid")),
        "dtstamp": ev.decoded("dtstamp").isoformat(),
        "start": ev.decoded("dtstart").isoformat(),
        "end": ev.decoded("dtend").isoformat(),
        "summary": str(ev.get("summary")),
        "description": str(ev.get("description")),
    })
json.dump({"name": str(cal.get("x-wr-calname")), "events": events}, sys.stdout)
