package receiver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
)

// Nagios perfdata markers (the first field of every line, docs/flapjack-1x.md 5.3).
const (
	serviceMarker = "[SERVICEPERFDATA]"
	hostMarker    = "[HOSTPERFDATA]"
)

// HostCheck is the check name given to host results ([HOSTPERFDATA] lines), as Flapjack's Nagios
// host perfdata template writes it.
const HostCheck = "HOST"

// MaxLineBytes is the longest Nagios line accepted, newline excluded: the event limit of docs/decisions.md D2.
const MaxLineBytes = schema.MaxEventBytes

// DefaultFIFO is where the receiver expects Nagios' perfdata pipe: beside Debian's Nagios 4
// perfdata files (nagios4-core's nagios.cfg suggests /var/lib/nagios4/service-perfdata), in a
// directory its nagios user owns. Flapjack 1.x used Nagios 3's /var/cache/nagios3/event_stream.fifo.
const DefaultFIFO = "/var/lib/nagios4/flapjack.fifo"

// DefaultPipeSize is the pipe buffer asked for at open (capped by /proc/sys/fs/pipe-max-size).
const DefaultPipeSize = 1 << 20

// DefaultFIFOMode is the mode a created pipe gets.
const DefaultFIFOMode = 0o660

// maxBatch bounds the events handed to Redis in one push.
const maxBatch = 1000

// nagiosMinFields is the field count of a line without the optional long output.
const nagiosMinFields = 9

// ParseNagiosLine converts one line of Nagios host or service perfdata into an event. The line
// holds TAB-separated fields: marker, timestamp, host, service, state, execution time, latency,
// output, perfdata and, optionally, long output. A trailing "\n" or "\r\n" is ignored.
//
// Mapping: host -> entity; service -> check (the literal HOST on [HOSTPERFDATA] lines, whatever
// the template put in that field); state UP -> ok and DOWN -> critical (any case), other states
// lower-cased and left to validation, so UNREACHABLE is refused; output -> summary;
// perfdata -> perfdata; long output -> details, with the two-character sequence `\n` (how Nagios
// escapes newlines in $LONGSERVICEOUTPUT$) turned into a newline; type service; time = timestamp.
// Execution time and latency are not part of an event and are ignored. Tabs inside the long
// output (the last field) are kept rather than taken as extra fields.
//
// The event is checked by schema.ValidateEvent and its encoding against schema.MaxEventBytes, so
// it is accepted or refused exactly as the executive would. Every error is a *schema.RejectError
// listing all reasons.
func ParseNagiosLine(line string) (schema.Event, error) {
	ev, _, err := parseNagios(line, nil)
	return ev, err
}

// pipeLine is a line of a pipe receiver (Nagios, nsca) without its line ending, or why it is
// refused before its fields are looked at.
func pipeLine(line string) (string, error) {
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if len(line) > MaxLineBytes {
		return "", rejectf("line is %d bytes, over the %d-byte limit", len(line), MaxLineBytes)
	}
	if !utf8.ValidString(line) {
		// The executive refuses invalid UTF-8 (docs/decisions.md D2); the encoding would replace it silently.
		return "", rejectf("line is not valid UTF-8")
	}
	if strings.TrimSpace(line) == "" {
		return "", rejectf("blank line")
	}
	return line, nil
}

// parseNagios is ParseNagiosLine that also appends the event's JSON to buf (the reader encodes a
// batch into one buffer) and returns the extended buffer; on error buf is returned unchanged.
func parseNagios(line string, buf []byte) (schema.Event, []byte, error) {
	line, err := pipeLine(line)
	if err != nil {
		return schema.Event{}, buf, err
	}
	var fields [nagiosMinFields + 1]string
	n := splitFields(line, '\t', fields[:])
	if n < nagiosMinFields {
		return schema.Event{}, buf, rejectf("line has %d tab-separated fields, need at least %d", n, nagiosMinFields)
	}
	marker, timestamp, host, service, state := fields[0], fields[1], fields[2], fields[3], fields[4]

	var reasons []string
	switch marker {
	case serviceMarker:
	case hostMarker:
		service = HostCheck
	default:
		reasons = append(reasons, fmt.Sprintf("first field %q is neither %s nor %s", text.Truncate(marker, 40), serviceMarker, hostMarker))
	}
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	switch {
	case timestamp == "" || strings.Trim(timestamp, "0123456789") != "":
		reasons = append(reasons, fmt.Sprintf("timestamp %q is not a string of digits", text.Truncate(timestamp, 40)))
	case err != nil:
		reasons = append(reasons, fmt.Sprintf("timestamp %q is out of range", text.Truncate(timestamp, 40)))
	}
	if len(reasons) > 0 {
		return schema.Event{}, buf, &schema.RejectError{Reasons: reasons}
	}
	switch {
	case strings.EqualFold(state, "up"):
		state = schema.StateOK
	case strings.EqualFold(state, "down"):
		state = schema.StateCritical
	}
	ev := schema.Event{Type: schema.TypeService, Entity: host, Check: service,
		State:   state, // schema lower-cases it and refuses what is not a service state
		Summary: fields[7], Perfdata: fields[8], Time: ts, HasTime: true}
	if n > nagiosMinFields {
		ev.Details = strings.ReplaceAll(fields[nagiosMinFields], `\n`, "\n")
	}
	return encodeEvent(ev, buf)
}

// encodeEvent validates ev (schema.ValidateEvent) and appends its JSON to buf, refusing it,
// as the executive would, when the encoding is over schema.MaxEventBytes.
func encodeEvent(ev schema.Event, buf []byte) (schema.Event, []byte, error) {
	ev, err := schema.ValidateEvent(ev)
	if err != nil {
		return schema.Event{}, buf, err
	}
	start := len(buf)
	out := ev.AppendJSON(buf)
	if size := len(out) - start; size > schema.MaxEventBytes {
		return schema.Event{}, buf, rejectf("event is %d bytes, over the %d-byte limit", size, schema.MaxEventBytes)
	}
	return ev, out, nil
}

// splitFields cuts s at sep into out, the last element taking the rest of s, and returns how
// many fields it filled (strings.SplitN without allocating).
func splitFields(s string, sep byte, out []string) int {
	n := 0
	for n < len(out)-1 {
		i := strings.IndexByte(s, sep)
		if i < 0 {
			break
		}
		out[n] = s[:i]
		s = s[i+1:]
		n++
	}
	out[n] = s
	return n + 1
}

func rejectf(format string, args ...any) *schema.RejectError {
	return &schema.RejectError{Reasons: []string{fmt.Sprintf(format, args...)}}
}

// ReadNagios reads Nagios perfdata lines from r (for example a perfdata file written in append
// mode) until EOF or until ctx ends, as RunNagios reads each opening of its FIFO. Failed enqueues
// are retried until ctx ends. It returns what it did; the error is a read error, nil at EOF or
// cancellation. ctx is checked between lines: a Read blocked on r is not interrupted.
func ReadNagios(ctx context.Context, r io.Reader, onReject func(Rejection), enq Enqueuer, log *zap.Logger) (Report, error) {
	if enq == nil {
		return Report{}, errors.New("nagios receiver: no Enqueuer given")
	}
	if log == nil {
		log = zap.NewNop()
	}
	nr := nagiosReader{enq: enq, log: log.With(zap.String("receiver", "nagios")), onReject: onReject}
	err := nr.read(ctx, r)
	if ctx.Err() != nil {
		err = nil
	}
	return nr.rep, err
}

// nagiosReader carries the line count and report across the openings of a FIFO.
type nagiosReader struct {
	enq      Enqueuer
	log      *zap.Logger
	onReject func(Rejection)
	line     int
	rep      Report
	// out, when set, receives the events in batches instead of enq (RunNagios' sender).
	out   chan<- [][]byte
	batch [][]byte
	// arena holds the JSON of the batch's events, which are slices of it: one allocation per
	// batch rather than one per event.
	arena []byte
	stats *NagiosStats
	// parse turns a line into an event appended to the arena (parseNagios; the NSCA receiver
	// reads other lines through the same pipe handling).
	parse func(line string, buf []byte) (schema.Event, []byte, error)
}

// arenaBytes is the arena's first size: a batch of typical perfdata lines fits.
const arenaBytes = 256 << 10

// flush hands the batch so far to out.
func (r *nagiosReader) flush() {
	if len(r.batch) > 0 {
		r.out <- r.batch
		r.batch, r.arena = nil, nil
	}
}

// read handles the lines of src until EOF (nil), cancellation (nil) or a read error.
func (r *nagiosReader) read(ctx context.Context, src io.Reader) error {
	br := bufio.NewReaderSize(src, MaxLineBytes+2) // room for a maximal line and its "\r\n"
	if r.out != nil {
		defer r.flush()
	}
	for ctx.Err() == nil {
		if r.out != nil && (br.Buffered() == 0 || len(r.batch) >= maxBatch) {
			r.flush() // everything read so far is handled: queue it before waiting for more
		}
		line, size, err := readLine(br)
		switch {
		case err == nil, errors.Is(err, io.EOF) && size > 0:
			r.line++
			r.rep.Records++
			if r.stats != nil {
				r.stats.LinesRead.Add(1)
			}
			r.handle(ctx, line, size)
		case size > 0:
			// A read interrupted mid-line (cancellation or a read error): the rest of the line
			// is gone, so the part we have is logged rather than parsed as if it were whole.
			r.log.Warn("input ended in the middle of a line; discarding it",
				zap.Int("line", r.line+1), zap.String("input", text.Truncate(string(line), logInputBytes)))
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}

func (r *nagiosReader) handle(ctx context.Context, line []byte, size int) {
	var err error
	if size > MaxLineBytes {
		err = rejectf("line is %d bytes, over the %d-byte limit", size, MaxLineBytes)
	} else {
		if r.arena == nil {
			r.arena = make([]byte, 0, arenaBytes)
		}
		start := len(r.arena)
		parse := r.parse
		if parse == nil {
			parse = parseNagios
		}
		if _, r.arena, err = parse(string(line), r.arena); err == nil {
			r.queue(ctx, r.arena[start:len(r.arena):len(r.arena)])
			return
		}
	}
	if r.stats != nil {
		r.stats.Rejected.Add(1)
	}
	reject(r.log, &r.rep, r.onReject, Rejection{Record: r.line, Line: r.line, Input: string(line), Reasons: reasonsOf(err)})
}

// queue adds an event to the batch (RunNagios) or enqueues it at once (ReadNagios).
func (r *nagiosReader) queue(ctx context.Context, ev []byte) {
	if r.out != nil {
		if r.batch == nil {
			r.batch = make([][]byte, 0, maxBatch)
		}
		r.batch = append(r.batch, ev)
		return
	}
	r.arena = nil // ev is the Enqueuer's now
	if enqueueWithRetry(ctx, r.enq, ev, r.log.With(zap.Int("line", r.line))) {
		r.rep.Enqueued++
	}
}

// readLine returns the next line without its line ending, and its size (line ending excluded).
// The line is valid until the next read from br. A line longer than MaxLineBytes is read to its
// end but only its first MaxLineBytes bytes are returned, so the caller can refuse it without
// holding it in memory. At EOF the last, unterminated line is returned with io.EOF.
func readLine(br *bufio.Reader) (line []byte, size int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case line == nil && !errors.Is(err, bufio.ErrBufferFull):
			line = chunk // the whole line is in br's buffer (it holds a maximal line): no copy
		case line == nil:
			line = append([]byte(nil), chunk...)
		}
		size += len(chunk)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil { // chunk ends with the newline
			size--
			if len(chunk) >= 2 && chunk[len(chunk)-2] == '\r' {
				size--
			}
		}
		if size <= MaxLineBytes {
			line = line[:size] // a short line came in one chunk: drop its line ending
		} else {
			line = line[:min(len(line), MaxLineBytes)]
		}
		return line, size, err
	}
}

// Backoff bounds for retrying a failed enqueue.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 5 * time.Second
)

// enqueueWithRetry hands event to enq, retrying failures until it succeeds (true) or ctx ends
// (false; the event is then logged at error level, so it is not lost silently). The enqueue
// itself runs without ctx's cancellation so that an event in flight at shutdown is finished.
func enqueueWithRetry(ctx context.Context, enq Enqueuer, event []byte, log *zap.Logger) bool {
	backoff := queue.Backoff{First: retryFirst, Max: retryMax}
	for {
		err := enq.Enqueue(context.WithoutCancel(ctx), event)
		if err == nil {
			return true
		}
		delay := backoff.Next()
		log.Error("enqueue failed; retrying", zap.Error(err), zap.Duration("retry_in", delay))
		if !sleep(ctx, delay) {
			log.Error("shutting down with an event not enqueued", zap.ByteString("event", event))
			return false
		}
	}
}

// sleep waits d, returning false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
