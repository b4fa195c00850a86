package main

import (
	"bytes"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// TestDeb: the package says what it is, installs with dpkg on this machine, its binary and units
// are in place and flapjack.service's ExecStart serves as the flapjack user, and dpkg -r then
// --purge leave nothing behind.
func TestDeb(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	a := build(t)
	checkSize(t, a.deb, maxDebBytes)
	version, err := debVersion(a.version)
	if err != nil {
		t.Fatal(err)
	}
	if want := "flapjack_" + version + "_amd64.deb"; filepath.Base(a.deb) != want {
		t.Errorf("package file %s, want %s", filepath.Base(a.deb), want)
	}
	fields := mustShell(t, a.root, "dpkg-deb -f "+a.deb+" Package Version Architecture Depends")
	for _, want := range []string{"Package: flapjack", "Version: " + version, "Architecture: amd64", "Depends: adduser"} {
		if !strings.Contains(fields, want+"\n") {
			t.Errorf("control fields lack %q:\n%s", want, fields)
		}
	}
	if conffiles := mustShell(t, a.root, "dpkg-deb -I "+a.deb+" conffiles"); strings.TrimSpace(conffiles) != "/etc/flapjack/flapjack.yaml" {
		t.Errorf("conffiles %q, want /etc/flapjack/flapjack.yaml", conffiles)
	}
	units, _ := filepath.Glob(filepath.Join(a.root, "etc/systemd/*.service"))
	if len(units) == 0 {
		t.Fatal("no units in etc/systemd")
	}

	t.Cleanup(func() { _, _ = shell(a.root, nil, dpkgPurge) })
	mustShell(t, a.root, dpkgInstall)
	if out := mustShell(t, a.root, installedVersion); out != "flapjack "+a.version+"\n" {
		t.Errorf("%s printed %q, want flapjack %s", installedVersion, out, a.version)
	}
	for _, u := range units {
		body, err := os.ReadFile(filepath.Join(debUnitDir, filepath.Base(u)))
		if err != nil {
			t.Errorf("unit %s not installed: %v", filepath.Base(u), err)
			continue
		}
		if !strings.Contains(string(body), "ExecStart="+debBinary+" ") {
			t.Errorf("installed %s does not run %s:\n%s", filepath.Base(u), debBinary, body)
		}
	}
	for _, doc := range []string{"flapjack-help.txt", "README.md", "prometheus/flapjack.rules.yml", "grafana/flapjack.json"} {
		if _, err := os.Stat(filepath.Join(debDocDir, doc)); err != nil {
			t.Errorf("%s/%s: %v", debDocDir, doc, err)
		}
	}
	if help, _ := os.ReadFile(filepath.Join(debDocDir, "flapjack-help.txt")); !bytes.Contains(help, []byte("==== flapjack server ====")) {
		t.Errorf("flapjack-help.txt lacks the server command's help:\n%.400s", help)
	}
	account := checkAccount(t)
	runUnit(t, "flapjack.service", account)

	mustShell(t, a.root, dpkgRemove)
	for _, gone := range []string{debBinary, filepath.Join(debUnitDir, "flapjack.service"), debDocDir} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("after %s, %s is still there (%v)", dpkgRemove, gone, err)
		}
	}
	if _, err := os.Stat(debConfig); err != nil {
		t.Errorf("after %s the configuration is kept until purge, as dpkg does with conffiles: %v", dpkgRemove, err)
	}
	mustShell(t, a.root, dpkgPurge)
	if _, err := os.Stat("/etc/flapjack"); !os.IsNotExist(err) {
		t.Errorf("after %s, /etc/flapjack is still there (%v)", dpkgPurge, err)
	}
	if _, err := user.Lookup("flapjack"); err == nil {
		t.Errorf("after %s the flapjack user is still there", dpkgPurge)
	}
	if out, err := exec.Command("dpkg-query", "-W", "-f", "${Status}", "flapjack").CombinedOutput(); err == nil && !strings.Contains(string(out), "not-installed") {
		t.Errorf("after %s dpkg still knows flapjack: %s", dpkgPurge, out)
	}
}

// checkAccount: postinst made the flapjack system user, and the configuration is readable by its
// group and nobody else's.
func checkAccount(t *testing.T) *user.User {
	t.Helper()
	u, err := user.Lookup("flapjack")
	if err != nil {
		t.Fatalf("postinst made no flapjack user: %v", err)
	}
	if passwd, _ := os.ReadFile("/etc/passwd"); !strings.Contains(string(passwd), ":/nonexistent:/usr/sbin/nologin\n") {
		t.Errorf("the flapjack user is not a system user without a shell or home")
	}
	st, err := os.Stat(debConfig)
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if st.Mode().Perm() != 0o640 || sys.Uid != 0 || u.Gid != strconv.FormatUint(uint64(sys.Gid), 10) {
		t.Errorf("%s: mode %v uid %d gid %d, want 0640 root:flapjack (gid %s)", debConfig, st.Mode().Perm(), sys.Uid, sys.Gid, u.Gid)
	}
	return u
}

// runUnit runs the installed unit's ExecStart as its User against a test Redis, on free loopback
// ports: it must serve /readyz and stop cleanly on SIGTERM.
func runUnit(t *testing.T, unit string, account *user.User) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(debUnitDir, unit))
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "ExecStart="); ok {
			argv = strings.Fields(rest)
		}
	}
	if len(argv) == 0 {
		t.Fatalf("%s has no ExecStart", unit)
	}
	uid, err := strconv.ParseUint(account.Uid, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	gid, err := strconv.ParseUint(account.Gid, 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	db := testredis.New(t)
	addr := testbinary.FreeAddr(t)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "FLAPJACK_REDIS_URL=" + db.URL(), "FLAPJACK_HTTP_ADDR=" + addr, "FLAPJACK_WEB_ADDR=" + testbinary.FreeAddr(t)}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	serve(t, unit+" ExecStart as "+account.Username, cmd, addr, &stderr)
}
