package receiver

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
)

// The Nagios external commands nsca writes for passive results.
const (
	serviceResultCommand = "PROCESS_SERVICE_CHECK_RESULT"
	hostResultCommand    = "PROCESS_HOST_CHECK_RESULT"
)

// serviceReturnCodes are the plugin return codes of service results.
var serviceReturnCodes = [...]string{schema.StateOK, schema.StateWarning, schema.StateCritical, schema.StateUnknown}

// ParseNSCALine converts one Nagios external command line, as the nsca daemon writes it into
// its command_file, into an event:
//
//	[1795575299] PROCESS_SERVICE_CHECK_RESULT;web-01;DISK;0;OK - 40% used|used=40%;80;90
//	[1795575299] PROCESS_HOST_CHECK_RESULT;web-01;1;host down
//
// The time in brackets is followed by a space (what nsca 2.10 writes) or a TAB (what Flapjack
// 1.x expected); a trailing "\n" or "\r\n" is ignored. Mapping: host -> entity; service ->
// check, or HOST for host results; return code -> state: for services 0 ok, 1 warning,
// 2 critical, 3 unknown; for hosts 0 (up) ok, 1 (down) and 2 (unreachable) critical; output:
// send_nsca's escapes undone (`\n` a newline, `\\` a backslash), the first line is split at its
// first '|' into summary and perfdata and the lines after it become details; type service;
// time = the bracketed time. Another
// command, a missing field or a code out of range is refused, every reason listed in a
// *schema.RejectError, as is anything the event rules refuse (schema.ValidateEvent).
func ParseNSCALine(line string) (schema.Event, error) {
	ev, _, err := parseNSCA(line, nil)
	return ev, err
}

// parseNSCA is ParseNSCALine appending the event's JSON to buf (see parseNagios).
func parseNSCA(line string, buf []byte) (schema.Event, []byte, error) {
	line, err := pipeLine(line)
	if err != nil {
		return schema.Event{}, buf, err
	}
	if line[0] != '[' {
		return schema.Event{}, buf, rejectf("line does not start with [time]: %q", text.Truncate(line, 40))
	}
	timestamp, rest, ok := strings.Cut(line[1:], "]")
	if !ok {
		return schema.Event{}, buf, rejectf("line does not start with [time]: no closing ]")
	}
	var reasons []string
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	switch {
	case timestamp == "" || strings.Trim(timestamp, "0123456789") != "":
		reasons = append(reasons, fmt.Sprintf("time %q is not a string of digits", text.Truncate(timestamp, 40)))
	case err != nil:
		reasons = append(reasons, fmt.Sprintf("time %q is out of range", text.Truncate(timestamp, 40)))
	}
	command := strings.TrimLeft(rest, " \t")
	if len(command) == len(rest) {
		reasons = append(reasons, "no space or TAB after [time]")
	}
	name, args, _ := strings.Cut(command, ";")
	var fields [4]string
	var ev schema.Event
	switch name {
	case serviceResultCommand:
		if n := splitFields(args, ';', fields[:4]); n < 4 {
			reasons = append(reasons, fmt.Sprintf("%s has %d of its 4 fields (host;service;return code;output)", name, n))
			break
		}
		ev.Entity, ev.Check = fields[0], fields[1]
		if code, ok := returnCode(fields[2], 3); ok {
			ev.State = serviceReturnCodes[code]
		} else {
			reasons = append(reasons, fmt.Sprintf("return code %q is not 0 (ok), 1 (warning), 2 (critical) or 3 (unknown)", text.Truncate(fields[2], 40)))
		}
		splitOutput(&ev, fields[3])
	case hostResultCommand:
		if n := splitFields(args, ';', fields[:3]); n < 3 {
			reasons = append(reasons, fmt.Sprintf("%s has %d of its 3 fields (host;return code;output)", name, n))
			break
		}
		ev.Entity, ev.Check = fields[0], HostCheck
		if code, ok := returnCode(fields[1], 2); ok {
			ev.State = schema.StateCritical
			if code == 0 {
				ev.State = schema.StateOK
			}
		} else {
			reasons = append(reasons, fmt.Sprintf("host return code %q is not 0 (up), 1 (down) or 2 (unreachable)", text.Truncate(fields[1], 40)))
		}
		splitOutput(&ev, fields[2])
	default:
		reasons = append(reasons, fmt.Sprintf("command %q is neither %s nor %s", text.Truncate(name, 40), serviceResultCommand, hostResultCommand))
	}
	if len(reasons) > 0 {
		return schema.Event{}, buf, &schema.RejectError{Reasons: reasons}
	}
	ev.Type, ev.Time, ev.HasTime = schema.TypeService, ts, true
	return encodeEvent(ev, buf)
}

// returnCode reads a plugin return code from 0 to highest.
func returnCode(s string, highest int) (int, bool) {
	if len(s) != 1 || s[0] < '0' || int(s[0]-'0') > highest {
		return 0, false
	}
	return int(s[0] - '0'), true
}

// splitOutput sets summary, perfdata and details from a plugin's output as nsca passes it on:
// send_nsca escapes the output's newlines as `\n` and its backslashes as `\\`, which are
// undone here as Nagios undoes them for passive results.
func splitOutput(ev *schema.Event, output string) {
	if strings.IndexByte(output, '\\') >= 0 {
		var b strings.Builder
		b.Grow(len(output))
		for i := 0; i < len(output); i++ {
			c := output[i]
			if c == '\\' && i+1 < len(output) && (output[i+1] == 'n' || output[i+1] == '\\') {
				i++
				if c = output[i]; c == 'n' {
					c = '\n'
				}
			}
			b.WriteByte(c)
		}
		output = b.String()
	}
	first, long, _ := strings.Cut(output, "\n")
	ev.Summary, ev.Perfdata, _ = strings.Cut(first, "|")
	ev.Details = long
}

// RunNSCA reads the external command lines the nsca daemon writes into its command_file, the
// named pipe opts.FIFO, until ctx ends, and queues their events (ParseNSCALine) in batches; it
// handles the pipe exactly as RunNagios does: created when missing, held open read-write (nsca
// opens and closes it for every result, which is then not an end of file), its buffer raised,
// events spooled to opts.Spool while Redis is away. Refused lines are logged, counted and
// reported (OnReject) with their reasons.
func RunNSCA(ctx context.Context, opts NagiosOptions, enq Enqueuer, log *zap.Logger) error {
	return runPipe(ctx, nscaPipe, opts, enq, log)
}
