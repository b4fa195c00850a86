package receiver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"go.uber.org/zap"

	"github.com/flapjackgo/flapjack/events"
	"github.com/flapjackgo/flapjack/queue"
	"github.com/flapjackgo/flapjack/schema"
)

// NagiosOptions configures RunNagios and RunNSCA.
type NagiosOptions struct {
	// FIFO is the named pipe Nagios writes host and service perfdata to (receiver.nagios.fifo,
	// DefaultFIFO by default), or nsca its external commands (receiver.nsca.fifo); required. It
	// is created when missing.
	FIFO string
	// FIFOMode and FIFOGroup are the mode (0: DefaultFIFOMode) and group (name or number; empty:
	// ours) of a pipe RunNagios creates.
	FIFOMode  os.FileMode
	FIFOGroup string
	// ReplaceFile: when a regular file stands at FIFO, move it aside, ingest its lines once and
	// create the pipe in its place. Without it RunNagios refuses, saying what to do.
	ReplaceFile bool
	// PipeSize is the pipe buffer asked for (0: DefaultPipeSize; negative: leave it).
	PipeSize int
	// Spool keeps events while Redis is away (what it drops when full is logged through
	// RunNagios's logger); nil: the reader waits for Redis instead (Nagios' writes are then
	// dropped once the pipe is full).
	Spool *Spool
	// Stats, if set, is updated as RunNagios works (see NewNagiosStats for its metrics).
	Stats *NagiosStats
	// OnReject, if set, is called with every rejected line.
	OnReject func(Rejection)
}

// NagiosStats counts what a pipe receiver (Nagios or NSCA) does.
type NagiosStats struct {
	LinesRead, Enqueued, Rejected, Spooled, Dropped atomic.Int64
	// PipeSize is the pipe buffer obtained at open.
	PipeSize atomic.Int64
	waiting  atomic.Pointer[os.File]
}

// Waiting is how many bytes wait unread in the pipe (FIONREAD); 0 when it is not open.
func (s *NagiosStats) Waiting() int {
	if f := s.waiting.Load(); f != nil {
		return pipeWaiting(f)
	}
	return 0
}

// NewNagiosStats creates the Nagios receiver's stats and exports them on reg (nil: not
// exported) as flapjack_receiver_nagios_*.
func NewNagiosStats(reg prometheus.Registerer) *NagiosStats { return newPipeStats(reg, nagiosPipe) }

// NewNSCAStats creates the NSCA receiver's stats and exports them on reg (nil: not exported) as
// flapjack_receiver_nsca_*, the same metrics as the Nagios receiver's.
func NewNSCAStats(reg prometheus.Registerer) *NagiosStats { return newPipeStats(reg, nscaPipe) }

func newPipeStats(reg prometheus.Registerer, k pipeKind) *NagiosStats {
	s := &NagiosStats{}
	f := promauto.With(reg)
	prefix := "flapjack_receiver_" + k.name + "_"
	counter := func(name, help string, v *atomic.Int64) {
		f.NewCounterFunc(prometheus.CounterOpts{Name: prefix + name + "_total", Help: help},
			func() float64 { return float64(v.Load()) })
	}
	counter("lines_read", "Lines read from the "+k.lines+" pipe.", &s.LinesRead)
	counter("enqueued", "Events from "+k.writer+" lines queued on Redis (directly or from the spool).", &s.Enqueued)
	counter("rejected", k.writer+" lines refused (logged with their reasons).", &s.Rejected)
	counter("spooled", "Events written to the on-disk spool while Redis was away.", &s.Spooled)
	counter("dropped", "Spooled events dropped, oldest first, because the spool was full.", &s.Dropped)
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: prefix + "pipe_waiting_bytes",
		Help: "Bytes written by " + k.writer + " and not yet read (FIONREAD on the pipe)."}, func() float64 { return float64(s.Waiting()) })
	f.NewGaugeFunc(prometheus.GaugeOpts{Name: prefix + "pipe_size_bytes",
		Help: "Buffer size of the " + k.lines + " pipe obtained at open."}, func() float64 { return float64(s.PipeSize.Load()) })
	return s
}

// pipeKind is what differs between the receivers reading a named pipe (one implementation of
// the pipe handling: held open, batched, spooled).
type pipeKind struct {
	name   string // "nagios": log field, error prefix, metric names, settings receiver.NAME.*
	writer string // who writes the pipe
	lines  string // what it writes
	wrote  string // what it wrote into a regular file standing at the pipe's path
	parse  func(line string, buf []byte) (schema.Event, []byte, error)
}

var (
	nagiosPipe = pipeKind{name: "nagios", writer: "Nagios", lines: "Nagios perfdata", wrote: "perfdata", parse: parseNagios}
	nscaPipe   = pipeKind{name: "nsca", writer: "nsca", lines: "nsca external command", wrote: "results", parse: parseNSCA}
)

// RunNagios reads Nagios perfdata lines from the named pipe opts.FIFO until ctx ends and queues
// their events in batches; invalid lines are logged, counted and reported (OnReject) with their
// line number and reasons.
//
// The pipe is created when missing and held open read-write for the whole run, so Nagios
// reloading, restarting or stopping is never an end of file: reading goes on without a gap and
// nothing waiting in the pipe is lost. Reading never waits for Redis: lines are parsed and
// handed, in batches, to a sender that pushes them through the Enqueuer (one LPUSH per batch when
// it is an *events.Publisher) and, while Redis is away, appends them to opts.Spool, drained in
// order when Redis returns.
//
// It returns nil when ctx is cancelled, and an error naming the path when the FIFO cannot be
// created, opened or read, or when something other than a named pipe stands at the path.
func RunNagios(ctx context.Context, opts NagiosOptions, enq Enqueuer, log *zap.Logger) error {
	return runPipe(ctx, nagiosPipe, opts, enq, log)
}

// runPipe is RunNagios for the lines of kind k.
func runPipe(ctx context.Context, k pipeKind, opts NagiosOptions, enq Enqueuer, log *zap.Logger) error {
	if opts.FIFO == "" {
		return fmt.Errorf("%s receiver: no FIFO path given", k.name)
	}
	if enq == nil {
		return fmt.Errorf("%s receiver: no Enqueuer given", k.name)
	}
	if log == nil {
		log = zap.NewNop()
	}
	if opts.Stats == nil {
		opts.Stats = newPipeStats(nil, k)
	}
	log = log.With(zap.String("receiver", k.name), zap.String("fifo", opts.FIFO))
	if opts.Spool != nil {
		opts.Spool.SetLogger(log)
	}
	aside, err := prepareFIFO(k, opts, log)
	if err != nil {
		return err
	}
	f, err := openFIFO(opts.FIFO)
	if err != nil {
		return fmt.Errorf("%s receiver: opening FIFO %s: %w", k.name, opts.FIFO, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return fmt.Errorf("%s receiver: %s is not a named pipe", k.name, opts.FIFO)
	}
	if opts.PipeSize >= 0 {
		want := opts.PipeSize
		if want == 0 {
			want = DefaultPipeSize
		}
		got, err := setPipeSize(f, want)
		if err != nil {
			log.Warn("could not raise the pipe buffer", zap.Error(err), zap.Int("pipe_size", got))
		}
		opts.Stats.PipeSize.Store(int64(got))
	}
	opts.Stats.waiting.Store(f)
	defer opts.Stats.waiting.Store(nil)
	log.Info("FIFO open; reading (held open read-write: "+k.writer+" closing or reopening it is not an end of file)",
		zap.Int64("pipe_size", opts.Stats.PipeSize.Load()))

	snd := newSender(enq, opts.Spool, opts.Stats, log)
	sent := make(chan struct{})
	go func() { defer close(sent); snd.run(ctx) }()
	r := nagiosReader{log: log, onReject: opts.OnReject, out: snd.batches, stats: opts.Stats, parse: k.parse}
	defer func() {
		close(snd.batches)
		<-sent
		log.Info(k.name+" receiver stopped", zap.Int("lines", r.rep.Records),
			zap.Int64("enqueued", opts.Stats.Enqueued.Load()), zap.Int("rejected", r.rep.Rejected),
			zap.Int64("spooled_now", spoolLen(opts.Spool)))
	}()
	if aside != "" {
		if err := r.ingestFile(ctx, k, aside); err != nil {
			return err
		}
	}
	stop := context.AfterFunc(ctx, func() {
		if err := f.SetReadDeadline(time.Unix(1, 0)); err != nil {
			f.Close()
		}
	})
	defer stop()
	if err := r.read(ctx, f); err != nil {
		return fmt.Errorf("%s receiver: reading FIFO %s: %w", k.name, opts.FIFO, err)
	}
	if ctx.Err() == nil {
		// Cannot happen while we hold a write end; say so rather than spin.
		return fmt.Errorf("%s receiver: unexpected end of file on FIFO %s", k.name, opts.FIFO)
	}
	return nil
}

func spoolLen(s *Spool) int64 {
	if s == nil {
		return 0
	}
	return s.Len()
}

// prepareFIFO makes sure a named pipe stands at opts.FIFO: it creates one when the path is
// missing and, with ReplaceFile, moves a regular file aside (returning its new path, whose
// lines are to be ingested once).
func prepareFIFO(k pipeKind, opts NagiosOptions, log *zap.Logger) (aside string, err error) {
	path := opts.FIFO
	mode := opts.FIFOMode
	if mode == 0 {
		mode = DefaultFIFOMode
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("%s receiver: FIFO %s: %w", k.name, path, err)
	case st.Mode()&os.ModeNamedPipe != 0:
		return "", nil
	case st.Mode().IsRegular() && opts.ReplaceFile:
		aside = fmt.Sprintf("%s.replaced-%s", path, time.Now().UTC().Format("20060102T150405Z"))
		if err := os.Rename(path, aside); err != nil {
			return "", fmt.Errorf("%s receiver: moving the regular file %s aside: %w", k.name, path, err)
		}
		log.Warn("moved the regular file at the FIFO path aside; its lines are ingested once, then it can be deleted",
			zap.String("moved_to", aside))
	case st.Mode().IsRegular():
		return "", fmt.Errorf("%s receiver: %s is a regular file, not a named pipe: %s wrote its %s there before the pipe existed. "+
			"Run again with --replace-file to move it aside to %s.replaced-<time>, queue its lines once and create the pipe, "+
			"or move it away yourself (the receiver then creates the pipe)", k.name, path, k.writer, k.wrote, path)
	default:
		return "", fmt.Errorf("%s receiver: %s is not a named pipe (mode %s); remove it or set receiver.%s.fifo to another path", k.name, path, st.Mode(), k.name)
	}
	if err := makeFIFO(path, mode, opts.FIFOGroup); err != nil {
		return "", fmt.Errorf("%s receiver: creating FIFO %s: %w", k.name, path, err)
	}
	log.Info("created the FIFO", zap.String("mode", fmt.Sprintf("%#o", mode.Perm())), zap.String("group", opts.FIFOGroup))
	return aside, nil
}

func (r *nagiosReader) ingestFile(ctx context.Context, k pipeKind, path string) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%s receiver: %w", k.name, err)
	}
	defer in.Close()
	before := r.rep
	if err := r.read(ctx, in); err != nil {
		return fmt.Errorf("%s receiver: reading %s: %w", k.name, path, err)
	}
	r.log.Info("ingested the file moved aside; delete it when satisfied", zap.String("file", path),
		zap.Int("lines", r.rep.Records-before.Records), zap.Int("rejected", r.rep.Rejected-before.Rejected))
	return nil
}

// batchPublisher is what *events.Publisher offers: a batch queued in one push, all or none,
// validated again (PublishRaw) or, for events this process validated and encoded as it read
// them, not (PublishEncoded).
type batchPublisher interface {
	PublishRaw(ctx context.Context, raws ...[]byte) ([]schema.Event, error)
	PublishEncoded(ctx context.Context, payloads ...[]byte) error
}

// sender takes batches of events from the reader and queues them, spooling while Redis is away.
type sender struct {
	enq     Enqueuer
	spool   *Spool
	stats   *NagiosStats
	log     *zap.Logger
	batches chan [][]byte
	down    bool
}

func newSender(enq Enqueuer, spool *Spool, stats *NagiosStats, log *zap.Logger) *sender {
	return &sender{enq: enq, spool: spool, stats: stats, log: log, batches: make(chan [][]byte, 256)}
}

// run delivers batches until the channel is closed (after the reader stopped), then returns;
// what is still spooled stays on disk for the next run.
func (s *sender) run(ctx context.Context) {
	backoff := queue.Backoff{First: retryFirst, Max: retryMax}
	var retry <-chan time.Time
	for {
		if retry == nil && s.spool != nil && s.spool.Len() > 0 {
			retry = time.After(0)
		}
		select {
		case b, ok := <-s.batches:
			if !ok {
				return
			}
			s.deliver(ctx, b)
		case <-retry:
			retry = nil
			if !s.drainOne(ctx) {
				retry = time.After(backoff.Next())
			} else {
				backoff = queue.Backoff{First: retryFirst, Max: retryMax}
			}
		}
	}
}

func (s *sender) deliver(ctx context.Context, b [][]byte) {
	if s.spool == nil {
		// No spool: wait for Redis (the reader, and then Nagios' writes, wait too).
		backoff := queue.Backoff{First: retryFirst, Max: retryMax}
		for {
			n, err := s.publish(ctx, b)
			b = b[n:]
			if err == nil {
				return
			}
			delay := backoff.Next()
			s.log.Error("enqueue failed; retrying", zap.Error(err), zap.Duration("retry_in", delay))
			if !sleep(ctx, delay) {
				s.log.Error("shutting down with events not enqueued", zap.Int("events", len(b)))
				return
			}
		}
	}
	if !s.down && s.spool.Len() == 0 {
		n, err := s.publish(ctx, b)
		b = b[n:]
		if err == nil {
			return
		}
		s.down = true
		s.log.Error("Redis unavailable; spooling events to disk until it returns", zap.Error(err))
	}
	dropped, err := s.spool.Append(b)
	if err != nil {
		s.log.Error("spooling failed; events lost", zap.Error(err), zap.Int("events", len(b)))
		s.stats.Dropped.Add(int64(len(b)))
		return
	}
	s.stats.Spooled.Add(int64(len(b)))
	s.stats.Dropped.Add(int64(dropped)) // the spool logs what it dropped
}

// drainOne queues the oldest spooled segment; false when Redis is still away (or another
// process is draining the spool).
func (s *sender) drainOne(ctx context.Context) bool {
	if _, err := s.spool.DrainOldest(ctx, s.publishSpooled); err != nil {
		if !errors.Is(err, ErrSpoolBusy) && !s.down {
			s.log.Error("draining the spool", zap.Error(err))
		}
		return false
	}
	if s.spool.Len() == 0 && s.down {
		s.down = false
		s.log.Info("Redis is back; spool drained")
	}
	return true
}

// publish queues events the reader validated and encoded, in order, and returns how many of them
// are done with before an error.
func (s *sender) publish(ctx context.Context, evs [][]byte) (int, error) {
	return s.publishChecked(ctx, evs, false)
}

// publishSpooled is publish for events read back from the spool: they were written by some
// process to a file, so the publisher validates them again.
func (s *sender) publishSpooled(ctx context.Context, evs [][]byte) (int, error) {
	return s.publishChecked(ctx, evs, true)
}

// publishChecked queues evs in order, validating them again when check is set, and returns how
// many of them are done with (queued, or refused and counted as rejected) before an error.
func (s *sender) publishChecked(ctx context.Context, evs [][]byte, check bool) (int, error) {
	ctx = context.WithoutCancel(ctx)
	if bp, ok := s.enq.(batchPublisher); ok {
		if !check {
			for start := 0; start < len(evs); start += maxBatch * 10 {
				chunk := evs[start:min(start+maxBatch*10, len(evs))]
				if err := bp.PublishEncoded(ctx, chunk...); err != nil {
					return start, err
				}
				s.stats.Enqueued.Add(int64(len(chunk)))
			}
			return len(evs), nil
		}
		for start := 0; start < len(evs); start += maxBatch * 10 {
			chunk := evs[start:min(start+maxBatch*10, len(evs))]
			_, err := bp.PublishRaw(ctx, chunk...)
			var inv *events.InvalidError
			if errors.As(err, &inv) { // cannot happen for parsed lines; refuse those, queue the rest
				bad := map[int]bool{}
				for _, p := range inv.Problems {
					bad[p.Index] = true
					s.log.Warn("event refused by the publisher", zap.Strings("reasons", p.Reasons))
				}
				var good [][]byte
				for i, e := range chunk {
					if !bad[i] {
						good = append(good, e)
					}
				}
				s.stats.Rejected.Add(int64(len(bad)))
				_, err = bp.PublishRaw(ctx, good...)
			}
			if err != nil {
				return start, err
			}
			s.stats.Enqueued.Add(int64(len(chunk)))
		}
		return len(evs), nil
	}
	for i, e := range evs {
		if err := s.enq.Enqueue(ctx, e); err != nil {
			return i, err
		}
		s.stats.Enqueued.Add(1)
	}
	return len(evs), nil
}
