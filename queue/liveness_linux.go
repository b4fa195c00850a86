//go:build linux

package queue

import (
	"fmt"
	"os"
	"strings"
)

// processFingerprint identifies this process beyond its PID: the kernel boot, the PID namespace
// and the process start time. A peer on the same host whose fingerprint no longer matches a
// running process is certainly dead, so its claimed items are recovered at once instead of after
// the heartbeat goes stale (a restarted stage must redo its predecessor's batch before newer
// events, or those would make it stale).
func processFingerprint(pid int) (bootID, pidNamespace, startTicks string) {
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	ns, _ := os.Readlink("/proc/self/ns/pid")
	return strings.TrimSpace(string(boot)), ns, processStart(pid)
}

// processStart is field 22 of /proc/PID/stat (start time in clock ticks), "" if no such process.
func processStart(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	// The command name (field 2) may contain spaces; fields resume after its closing ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return ""
	}
	return fields[19]
}

// localPeer judges a peer recorded with the given fingerprint, on this host: known is false
// when it cannot tell (another boot or PID namespace, no fingerprint); otherwise dead says
// whether that very process (PID and start time) is gone.
func localPeer(pid int, bootID, pidNamespace, startTicks string) (known, dead bool) {
	myBoot, myNS, _ := processFingerprint(0)
	if bootID == "" || startTicks == "" || bootID != myBoot || pidNamespace != myNS {
		return false, false
	}
	return true, processStart(pid) != startTicks
}
