// Package reliability holds no product code: its tests prove, against the real `flapjack`
// binary, real redis-server and real peers (a private prosody, a local PagerDuty Events API v2
// server), the crash and outage guarantees of docs/decisions.md D10 and D13:
//
//   - TestCrashesLoseNothing runs the executive, the notifier and the Jabber and PagerDuty
//     gateways as separate processes under a steady stream of state changes, SIGKILLs each of
//     them several times at random moments (seeded; the seed is logged and
//     FLAPJACK_RELIABILITY_SEED replays it) and restarts them. In the end every event is
//     reflected in the check state exactly once, every notification and every alert was queued
//     exactly once (seen with MONITOR), every alert reached its peer at least once, and no
//     processing list or dead-letter list holds anything.
//   - TestRedisOutageUnderLoad runs `flapjack server` against a persistent redis-server
//     (appendonly, appendfsync always) that is killed for five seconds and restarted under
//     load: the server keeps running, /readyz answers 503 during the outage and 200 after it,
//     every stage logs its failures with a growing retry delay and recovers, and every event
//     Redis acknowledged is processed exactly once and alerted exactly once.
//   - TestLostRepliesLoseNothing cuts the connection between a stage and Redis just after Redis
//     carried out a claim but before its reply reached the stage: the live stage must still
//     finish the item instead of leaving it in its processing list.
//   - TestBacklogFlipsInOneSecondAreAllAlerted: a backlog worked off after an outage puts
//     several state changes of one check in the same second; each must still be alerted.
//
// The one repeat allowed: a gateway killed after its peer took a message but before the
// delivery was recorded in Redis delivers that message again when it restarts (it cannot know
// the peer has it). Only the message in hand can repeat, so at most one per kill; the crash
// test counts them per gateway. PagerDuty deduplicates the repeat on its dedup_key.
//
// The tests build the binary once (TestMain) and drive it as subprocesses, so what they prove
// holds for the processes operators run.
package reliability
