// Command smtpd is the tests' SMTP server (package testsmtp starts it as a separate process):
// github.com/emersion/go-smtp on a loopback port, STARTTLS with the given certificate, AUTH
// PLAIN and LOGIN, every accepted message stored as a JSON file, and error replies for chosen
// recipients. SIGTERM stops it gracefully (sessions in progress finish).
//
//	smtpd -addr 127.0.0.1:0 -dir DIR [-cert F -key F] [-user U -password P] [-reply rcpt=451x2 ...] [-data-delay 20ms]
//
// It prints "listening <addr>" on standard output once it accepts connections.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/flapjackgo/flapjack/internal/testing/testsmtp"
)

type replies map[string]testsmtp.Reply

func (r replies) String() string { return fmt.Sprint(map[string]testsmtp.Reply(r)) }

// Set reads rcpt=CODE or rcpt=CODExTIMES.
func (r replies) Set(s string) error {
	rcpt, spec, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("want rcpt=CODE[xTIMES], got %q", s)
	}
	codeText, timesText, _ := strings.Cut(spec, "x")
	code, err := strconv.Atoi(codeText)
	if err != nil || code < 400 || code > 599 {
		return fmt.Errorf("reply code must be 400..599, got %q", codeText)
	}
	times := 0
	if timesText != "" {
		if times, err = strconv.Atoi(timesText); err != nil || times < 1 {
			return fmt.Errorf("times must be a positive number, got %q", timesText)
		}
	}
	r[rcpt] = testsmtp.Reply{Code: code, Times: times}
	return nil
}

func main() {
	cfg := testsmtp.Config{Replies: replies{}}
	var user, password string
	flag.StringVar(&cfg.Addr, "addr", "127.0.0.1:0", "listen address")
	flag.StringVar(&cfg.Dir, "dir", "", "directory for messages/ and events.log")
	flag.StringVar(&cfg.CertFile, "cert", "", "certificate (PEM) for STARTTLS; none: no STARTTLS")
	flag.StringVar(&cfg.KeyFile, "key", "", "key (PEM) of -cert")
	flag.StringVar(&user, "user", "", "account for AUTH PLAIN/LOGIN; none: no AUTH")
	flag.StringVar(&password, "password", "", "password of -user")
	flag.DurationVar(&cfg.DataDelay, "data-delay", 0, "time taken to accept each message")
	flag.Var(replies(cfg.Replies), "reply", "rcpt=CODE[xTIMES]: answer RCPT TO for rcpt with CODE (the first TIMES times); repeatable")
	flag.Parse()
	if cfg.Dir == "" {
		fmt.Fprintln(os.Stderr, "smtpd: -dir is required")
		os.Exit(2)
	}
	if user != "" {
		cfg.Users = map[string]string{user: password}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := testsmtp.Serve(ctx, cfg, func(addr string) { fmt.Printf("listening %s\n", addr) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "smtpd:", err)
		os.Exit(1)
	}
}
