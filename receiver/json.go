package receiver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/flapjackgo/flapjack/internal/text"
	"github.com/flapjackgo/flapjack/schema"
	"go.uber.org/zap"
)

// MaxSensuRecordBytes bounds one Sensu event on input. Sensu events carry client/entity
// metadata and check history besides the result, so they may be larger than a Flapjack event;
// the converted event still has to fit schema.MaxEventBytes.
const MaxSensuRecordBytes = 1 << 20

// JSONOptions configures RunJSON.
type JSONOptions struct {
	// Sensu reads each record as a Sensu 1.x or Sensu Go event (ParseSensuEvent) instead of a
	// Flapjack event.
	Sensu bool
	// OnReject, if set, is called with every rejected record.
	OnReject func(Rejection)
}

// SyntaxError reports input that cannot be split into JSON values any more, so the rest of the
// stream is unreadable. Records before it have been handled.
type SyntaxError struct {
	Line int    // 1-based line of the offending byte, or where a value left unclosed starts
	Msg  string // what is wrong
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// RunJSON reads JSON records from r until EOF and enqueues each valid one. The input may be one
// object per line, objects concatenated or separated by any whitespace, or a top-level JSON array
// of objects (each element is a record; several arrays, or arrays and objects, may follow each
// other).
//
// A record is found by matching braces and brackets outside strings, so a record whose content is
// malformed (`{"entity": x}`) or invalid (unknown field, wrong state) is rejected on its own,
// with its record number, start line and every reason, and reading goes on. Input that cannot be
// split into JSON values (an unclosed object or string at EOF, a stray `}` or `,`, a bare word,
// a missing comma in a top-level array) stops the run with a *SyntaxError naming the line;
// records before it are kept. Records over schema.MaxEventBytes (MaxSensuRecordBytes with
// opts.Sensu) are rejected without being buffered whole.
//
// A failed enqueue stops the run with an error naming the record and its line (the producer,
// for example a Sensu handler, sees the failure); the enqueue runs without ctx's cancellation so
// that a record in flight at shutdown is finished. Cancellation is checked between records and
// returns the report with a nil error; a Read blocked on r is not interrupted.
func RunJSON(ctx context.Context, r io.Reader, opts JSONOptions, enq Enqueuer, log *zap.Logger) (Report, error) {
	var rep Report
	if enq == nil {
		return rep, errors.New("json receiver: no Enqueuer given")
	}
	if log == nil {
		log = zap.NewNop()
	}
	log = log.With(zap.String("receiver", "json"), zap.Bool("sensu", opts.Sensu))
	limit, parse := schema.MaxEventBytes, schema.ParseEvent
	if opts.Sensu {
		limit, parse = MaxSensuRecordBytes, ParseSensuEvent
	}
	sc := newJSONScanner(r, limit)
	for ctx.Err() == nil {
		rec, err := sc.next()
		if errors.Is(err, io.EOF) {
			return rep, nil
		}
		if err != nil {
			return rep, fmt.Errorf("json receiver: after %d records: %w", rep.Records, err)
		}
		rep.Records++
		var ev schema.Event
		if rec.size > limit {
			err = rejectf("record is %d bytes, over the %d-byte limit", rec.size, limit)
		} else {
			ev, err = parse(rec.raw)
		}
		if err != nil {
			reject(log, &rep, opts.OnReject, Rejection{Record: rep.Records, Line: rec.line, Input: string(rec.raw), Reasons: reasonsOf(err)})
			continue
		}
		b, err := json.Marshal(ev)
		if err == nil {
			err = enq.Enqueue(context.WithoutCancel(ctx), b)
		}
		if err != nil {
			return rep, fmt.Errorf("json receiver: enqueueing record %d (line %d): %w", rep.Records, rec.line, err)
		}
		rep.Enqueued++
	}
	return rep, nil
}

// jsonRecord is one top-level JSON value (or element of a top-level array).
type jsonRecord struct {
	raw  []byte // the value's bytes, at most the scanner's limit
	size int    // the value's full size
	line int    // line of its first byte
}

// jsonScanner splits a byte stream into JSON values without decoding them, tracking lines.
// Unlike json.Decoder, which cannot resynchronise after a syntax error, it finds a value's end
// from its brackets alone, so one malformed object does not take the rest of the stream with it.
type jsonScanner struct {
	br    *bufio.Reader
	limit int
	line  int // line of the next byte to read

	inArray    bool // inside a top-level array
	arrayLine  int
	needComma  bool // an element was read: ',' or ']' must follow
	afterComma bool // a ',' was read: an element must follow
}

func newJSONScanner(r io.Reader, limit int) *jsonScanner {
	return &jsonScanner{br: bufio.NewReaderSize(r, 64*1024), limit: limit, line: 1}
}

// readByte returns the next byte and the line it is on.
func (s *jsonScanner) readByte() (byte, int, error) {
	b, err := s.br.ReadByte()
	if err != nil {
		return 0, s.line, err
	}
	ln := s.line
	if b == '\n' {
		s.line++
	}
	return b, ln, nil
}

func (s *jsonScanner) unreadByte(b byte) {
	_ = s.br.UnreadByte() // always valid right after ReadByte
	if b == '\n' {
		s.line--
	}
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// skipSpace returns the next byte that is not JSON whitespace (or a UTF-8 byte order mark).
func (s *jsonScanner) skipSpace() (byte, int, error) {
	for {
		b, ln, err := s.readByte()
		if err != nil || !isSpace(b) {
			if err == nil && b == 0xEF && s.skipBOM() {
				continue
			}
			return b, ln, err
		}
	}
}

// skipBOM consumes the rest of a byte order mark whose first byte was just read.
func (s *jsonScanner) skipBOM() bool {
	rest, err := s.br.Peek(2)
	if err != nil || rest[0] != 0xBB || rest[1] != 0xBF {
		return false
	}
	_, _ = s.br.Discard(2)
	return true
}

func (s *jsonScanner) syntaxErr(line int, format string, args ...any) error {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// next returns the next record, io.EOF at a clean end of input, a *SyntaxError, or a read
// error.
func (s *jsonScanner) next() (jsonRecord, error) {
	for {
		b, ln, err := s.skipSpace()
		if errors.Is(err, io.EOF) {
			if s.inArray {
				return jsonRecord{}, s.syntaxErr(s.arrayLine, "the array starting here is not closed at the end of input (line %d)", s.line)
			}
			return jsonRecord{}, io.EOF
		}
		if err != nil {
			return jsonRecord{}, fmt.Errorf("reading line %d: %w", ln, err)
		}
		if s.inArray {
			switch {
			case b == ']' && s.afterComma:
				return jsonRecord{}, s.syntaxErr(ln, "expected an array element after ',', found ']'")
			case b == ']':
				s.inArray = false
				continue
			case b == ',' && s.needComma:
				s.needComma, s.afterComma = false, true
				continue
			case s.needComma:
				return jsonRecord{}, s.syntaxErr(ln, "expected ',' or ']' after an array element, found %q", b)
			case b == ',':
				return jsonRecord{}, s.syntaxErr(ln, "unexpected ',' in array")
			}
			s.needComma, s.afterComma = true, false
			return s.value(b, ln)
		}
		if b == '[' {
			s.inArray, s.arrayLine, s.needComma, s.afterComma = true, ln, false, false
			continue
		}
		return s.value(b, ln)
	}
}

// value reads the value whose first byte b (on line ln) was just read.
func (s *jsonScanner) value(b byte, ln int) (jsonRecord, error) {
	rec := jsonRecord{line: ln}
	add := func(c byte) {
		if rec.size < s.limit {
			rec.raw = append(rec.raw, c)
		}
		rec.size++
	}
	add(b)
	switch {
	case b == '{' || b == '[':
		depth, inString, escaped := 1, false, false
		for depth > 0 {
			c, _, err := s.readByte()
			if errors.Is(err, io.EOF) {
				return rec, s.syntaxErr(ln, "the value starting here is not closed at the end of input (line %d)", s.line)
			}
			if err != nil {
				return rec, fmt.Errorf("reading line %d: %w", s.line, err)
			}
			add(c)
			switch {
			case inString && escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case inString && c == '"':
				inString = false
			case inString:
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
			}
		}
		return rec, nil
	case b == '"':
		escaped := false
		for {
			c, _, err := s.readByte()
			if errors.Is(err, io.EOF) {
				return rec, s.syntaxErr(ln, "the string starting here is not closed at the end of input (line %d)", s.line)
			}
			if err != nil {
				return rec, fmt.Errorf("reading line %d: %w", s.line, err)
			}
			add(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				return rec, nil
			}
		}
	case b == '}' || b == ']' || b == ',' || b == ':':
		return rec, s.syntaxErr(ln, "unexpected %q where a JSON value should start", b)
	default:
		// A number or true/false/null: read up to the next delimiter and let it be refused as
		// "not an object". Anything else cannot start a JSON value.
		for {
			c, _, err := s.readByte()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return rec, fmt.Errorf("reading line %d: %w", s.line, err)
			}
			if isSpace(c) || c == ',' || c == ']' || c == '}' || c == '{' || c == '[' || c == '"' || c == ':' {
				s.unreadByte(c)
				break
			}
			add(c)
		}
		if rec.size > s.limit || !json.Valid(rec.raw) {
			return rec, s.syntaxErr(ln, "invalid JSON value %q", text.Truncate(string(rec.raw), 40))
		}
		return rec, nil
	}
}
