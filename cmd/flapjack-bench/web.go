package main

import (
	"fmt"
	"io"
	"time"
)

// webReads: the web UI's failing list for triage over 10,000 checks of which 500 fail, against a
// real `flapjack web`: ms per request of GET /checks_failing (the page, every failing check read
// and sorted most severe first) and of /checks_failing/live (the fragment its script polls).
func (b *bench) webReads() error {
	env, err := startRedis()
	if err != nil {
		return err
	}
	defer env.close()
	const checks, failing, requests = 10000, 500, 30
	fmt.Printf("== web UI: /checks_failing over %d checks of which %d fail, %d requests\n", checks, failing, requests)
	states := []string{"critical", "warning", "unknown"}
	gen := func(i int) string {
		state := "ok"
		if i%(checks/failing) == 0 {
			state = states[i%len(states)]
		}
		return serviceEvent(fmt.Sprintf("host-%d.example.com", i/10), fmt.Sprintf("check-%d", i%10), state, base+int64(i%600))
	}
	if err := env.push(checks, gen); err != nil {
		return err
	}
	if _, err := b.runExecutives(env, checks, 1); err != nil {
		return err
	}
	addr := freeAddr()
	srv, err := b.start(append([]string{"FLAPJACK_REDIS_URL=" + env.url, "FLAPJACK_WEB_ADDR=" + addr}, quietEnv...), "web")
	if err != nil {
		return err
	}
	defer srv.stop()
	go io.Copy(io.Discard, srv.stdout)
	root := "http://" + addr
	if err := waitReady(root+"/checks_failing", 30*time.Second); err != nil {
		return err
	}
	for _, path := range []string{"/checks_failing", "/checks_failing/live"} {
		if err := b.timeRoute(root, path, checks, requests); err != nil {
			return err
		}
	}
	return nil
}
