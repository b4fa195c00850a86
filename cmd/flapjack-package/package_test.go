package main

// The artefacts as an operator gets them: `make build`, `make image` and `make deb` run once per
// test binary, then the image is read the way `docker load` and skopeo read it and its binary run
// from its own layer, and the package is installed with dpkg, run, removed and purged on this
// machine (as root, which CI is).

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/flapjackgo/flapjack/internal/testing/testbinary"
	"github.com/flapjackgo/flapjack/internal/testing/testredis"
)

// The commands of README.md's "Install" section, as written there (cmd/flapjack's TestReadme
// checks each README line is one of these): the make and dpkg lines run as they are, the docker
// lines run through dockerRun and dockerLoad, as no Docker engine runs here.
const (
	makeBuild        = "make build"
	makeImage        = "make image"
	makeDeb          = "make deb"
	dockerLoadLine   = "docker load -i bin/flapjack-image.tar"
	dockerVersion    = "docker run --rm flapjack:latest version"
	dockerServer     = "docker run -d -p 3080:3080 -p 3081:3081 -e FLAPJACK_REDIS_URL=redis://redis.example:6379/0 flapjack:latest"
	dpkgInstall      = "dpkg -i bin/flapjack_*_amd64.deb"
	installedVersion = "/usr/bin/flapjack version"
	dpkgRemove       = "dpkg -r flapjack"
	dpkgPurge        = "dpkg --purge flapjack"
)

// The limits the issue sets: an image pulled quickly, a package that fits a small mirror.
const (
	maxImageBytes = 40 << 20
	maxDebBytes   = 25 << 20
)

type artefacts struct {
	root, version, image, deb string
}

var (
	buildOnce sync.Once
	built     artefacts
	buildErr  error
)

// build runs make image and make deb once for the test binary.
func build(t *testing.T) artefacts {
	t.Helper()
	buildOnce.Do(func() { built, buildErr = makeArtefacts() })
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func makeArtefacts() (artefacts, error) {
	testbinary.TrackSources()
	root, err := filepath.Abs("../..")
	if err != nil {
		return artefacts{}, err
	}
	a := artefacts{root: root, image: filepath.Join(root, "bin", "flapjack-image.tar")}
	trackInputs(root)
	describe, err := exec.Command("git", "-C", root, "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		return a, fmt.Errorf("git describe: %w", err)
	}
	a.version = strings.TrimSpace(string(describe))
	for _, line := range []string{makeBuild, makeImage, makeDeb} {
		start := time.Now()
		if out, err := shell(root, nil, line); err != nil {
			return a, fmt.Errorf("%s: %w\n%s", line, err, out)
		}
		fmt.Printf("%s took %v\n", line, time.Since(start).Round(100*time.Millisecond))
	}
	debs, _ := filepath.Glob(filepath.Join(root, "bin", "flapjack_*_amd64.deb"))
	if len(debs) != 1 {
		return a, fmt.Errorf("make deb left %d packages in bin/, want 1: %v", len(debs), debs)
	}
	a.deb = debs[0]
	return a, nil
}

// trackInputs opens what the Makefile packages besides Go sources, so go test reruns the tests
// when one of them changes.
func trackInputs(root string) {
	for _, dir := range []string{"etc", "cmd/flapjack-package/debian"} {
		_ = filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				_, _ = os.ReadFile(p)
			}
			return nil
		})
	}
	for _, f := range []string{"Makefile", "README.md", "CHANGELOG.md"} {
		_, _ = os.ReadFile(filepath.Join(root, f))
	}
}

// shell runs a README line through sh -c in dir.
func shell(dir string, env []string, line string) (string, error) {
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustShell(t *testing.T, dir, line string) string {
	t.Helper()
	out, err := shell(dir, nil, line)
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return out
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Fatal("this test installs a package and runs the image's binary in a chroot: run it as root (CI does)")
	}
}

// TestBuild: make build, the from-source way, leaves a bin/flapjack of this version.
func TestBuild(t *testing.T) {
	t.Parallel()
	a := build(t)
	out, err := exec.Command(filepath.Join(a.root, "bin", "flapjack"), "version").Output()
	if err != nil || string(out) != "flapjack "+a.version+"\n" {
		t.Errorf("bin/flapjack version after %s: %q %v, want flapjack %s", makeBuild, out, err, a.version)
	}
}

// TestImage: the archive has the shape docker load reads, two readers agree on its config, and
// its binary runs from its own layer as `docker run` would run it.
func TestImage(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	a := build(t)
	checkSize(t, a.image, maxImageBytes)
	dockerLoad(t, a)
	img := imageByTag(t, a.image, "flapjack:latest")
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	checkConfig(t, cfg, a.version)
	// a second, independent reader: skopeo (Debian's), as podman would read it
	out, err := exec.Command("skopeo", "inspect", "--config", "docker-archive:"+a.image).Output()
	if err != nil {
		t.Fatalf("skopeo inspect --config: %v (scripts/test-deps.sh installs skopeo)", err)
	}
	var seen v1.ConfigFile
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("skopeo's config: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(seen.Config, cfg.Config) || seen.Architecture != "amd64" || seen.OS != "linux" {
		t.Errorf("skopeo reads another config:\n%+v\ngo-containerregistry:\n%+v", seen, cfg)
	}

	rootfs := extract(t, img)
	checkLayer(t, rootfs, cfg)
	stdout := dockerRun(t, a, rootfs, dockerVersion)
	if want := "flapjack " + a.version + "\n"; stdout != want {
		t.Errorf("%s printed %q, want %q", dockerVersion, stdout, want)
	}
	dockerRun(t, a, rootfs, dockerServer)
}

// dockerLoad checks what `docker load -i` (and podman load) reads: manifest.json listing one
// image with its config, its layers and both tags, each a file of the archive.
func dockerLoad(t *testing.T, a artefacts) {
	t.Helper()
	file := strings.TrimPrefix(dockerLoadLine, "docker load -i ")
	entries := tarEntries(t, filepath.Join(a.root, file))
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("%s: manifest.json %v: %s", dockerLoadLine, err, entries["manifest.json"])
	}
	m := manifest[0]
	for _, tag := range []string{"flapjack:" + a.version, "flapjack:latest"} {
		if !slices.Contains(m.RepoTags, tag) {
			t.Errorf("%s: RepoTags %v lack %s", dockerLoadLine, m.RepoTags, tag)
		}
	}
	if len(m.Layers) != 1 {
		t.Errorf("%s: %d layers, want 1 (no base image)", dockerLoadLine, len(m.Layers))
	}
	for _, f := range append([]string{m.Config}, m.Layers...) {
		if _, ok := entries[f]; !ok {
			t.Errorf("%s: manifest.json names %s, which the archive lacks", dockerLoadLine, f)
		}
	}
}

func tarEntries(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	walkTar(t, f, func(h *tar.Header, body io.Reader) error {
		b, err := io.ReadAll(body)
		out[h.Name] = b
		return err
	})
	return out
}

// walkTar calls fn for each entry of the tar stream r, failing the test on an error.
func walkTar(t *testing.T, r io.Reader, fn func(h *tar.Header, body io.Reader) error) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err == nil {
			err = fn(h, tr)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkSize logs the size of the file at path and asserts it is under limit.
func checkSize(t *testing.T, path string, limit int64) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %.1f MB", path, float64(info.Size())/(1<<20))
	if info.Size() >= limit {
		t.Errorf("%s is %d bytes, want under %d", filepath.Base(path), info.Size(), limit)
	}
}

func imageByTag(t *testing.T, archive, ref string) v1.Image {
	t.Helper()
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := tarball.ImageFromPath(archive, &tag)
	if err != nil {
		t.Fatalf("%s in %s: %v", ref, archive, err)
	}
	return img
}

func checkConfig(t *testing.T, cfg *v1.ConfigFile, version string) {
	t.Helper()
	c := cfg.Config
	if !slices.Equal(c.Entrypoint, []string{"/usr/bin/flapjack"}) || !slices.Equal(c.Cmd, []string{"server"}) {
		t.Errorf("entrypoint %q, cmd %q: want [/usr/bin/flapjack] [server]", c.Entrypoint, c.Cmd)
	}
	if c.User != "10001:10001" {
		t.Errorf("user %q, want the unprivileged 10001:10001", c.User)
	}
	for _, p := range []string{"3080/tcp", "3081/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s not exposed: %v", p, c.ExposedPorts)
		}
	}
	for _, kv := range []string{"FLAPJACK_HTTP_ADDR=0.0.0.0:3081", "FLAPJACK_WEB_ADDR=0.0.0.0:3080"} {
		if !slices.Contains(c.Env, kv) {
			t.Errorf("env %v lacks %s: a published port cannot reach a loopback listener", c.Env, kv)
		}
	}
	for label, want := range map[string]string{
		"org.opencontainers.image.version":  version,
		"org.opencontainers.image.source":   "https://github.com/flapjackgo/flapjack",
		"org.opencontainers.image.licenses": "NOASSERTION",
	} {
		if c.Labels[label] != want {
			t.Errorf("label %s = %q, want %q", label, c.Labels[label], want)
		}
	}
	if cfg.Architecture != "amd64" || cfg.OS != "linux" {
		t.Errorf("platform %s/%s, want linux/amd64", cfg.OS, cfg.Architecture)
	}
}

// extract writes the image's filesystem, read back through go-containerregistry, to a
// directory a chroot can enter.
func extract(t *testing.T, img v1.Image) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	walkTar(t, rc, func(h *tar.Header, body io.Reader) error {
		p := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			return os.Chmod(p, os.FileMode(h.Mode&0o777)|stickyIf(h.Mode))
		case tar.TypeSymlink:
			return os.Symlink(h.Linkname, p)
		case tar.TypeReg:
			b, err := io.ReadAll(body)
			if err != nil {
				return err
			}
			return os.WriteFile(p, b, os.FileMode(h.Mode).Perm())
		}
		return fmt.Errorf("layer entry %s of type %c", h.Name, h.Typeflag)
	})
	return dir
}

func stickyIf(mode int64) os.FileMode {
	if mode&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// checkLayer: the user the config names exists, the binary is static, the CA bundle and the
// time zones are usable.
func checkLayer(t *testing.T, rootfs string, cfg *v1.ConfigFile) {
	t.Helper()
	passwd, _ := os.ReadFile(filepath.Join(rootfs, "etc/passwd"))
	uid := strings.Split(cfg.Config.User, ":")[0]
	if !strings.Contains(string(passwd), "flapjack:x:"+uid+":") {
		t.Errorf("/etc/passwd has no flapjack user with the config's uid %s:\n%s", uid, passwd)
	}
	bin, err := elf.Open(filepath.Join(rootfs, "usr/bin/flapjack"))
	if err != nil {
		t.Fatal(err)
	}
	defer bin.Close()
	for _, p := range bin.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("/usr/bin/flapjack asks for a dynamic loader: not built with CGO_ENABLED=0")
		}
	}
	pem, _ := os.ReadFile(filepath.Join(rootfs, "etc/ssl/certs/ca-certificates.crt"))
	if pool := x509.NewCertPool(); !pool.AppendCertsFromPEM(pem) || bytes.Count(pem, []byte("BEGIN CERTIFICATE")) < 50 {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt: %d certificates", bytes.Count(pem, []byte("BEGIN CERTIFICATE")))
	}
	for _, zone := range []string{"Europe/London", "America/New_York", "Australia/Sydney", "UTC"} {
		data, err := os.ReadFile(filepath.Join(rootfs, "usr/share/zoneinfo", zone))
		if err == nil {
			_, err = time.LoadLocationFromTZData(zone, data)
		}
		if err != nil {
			t.Errorf("time zone %s in the image: %v", zone, err)
		}
	}
}

// dockerRun runs a README `docker run` line the way Docker would: the image named by its tag
// from the archive, its entrypoint and (unless the line gives arguments) its command, its
// environment plus -e, as its user, chrooted into its extracted layer. -p must name ports the
// image exposes. A -d line is the server: its Redis is a test database and it listens on free
// loopback ports (the machine is shared), and it must answer /readyz and stop cleanly on SIGTERM.
// It returns what a foreground line printed.
func dockerRun(t *testing.T, a artefacts, rootfs, line string) string {
	t.Helper()
	words := strings.Fields(line)
	if len(words) < 3 || words[0] != "docker" || words[1] != "run" {
		t.Fatalf("%q is not a docker run line", line)
	}
	var env, ports []string
	detached := false
	i := 2
	for ; i < len(words) && strings.HasPrefix(words[i], "-"); i++ {
		switch words[i] {
		case "--rm":
		case "-d":
			detached = true
		case "-e":
			i++
			env = append(env, words[i])
		case "-p":
			i++
			ports = append(ports, words[i][strings.LastIndex(words[i], ":")+1:]+"/tcp")
		default:
			t.Fatalf("%s: dockerRun does not know %s", line, words[i])
		}
	}
	img := imageByTag(t, a.image, words[i])
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if _, ok := cfg.Config.ExposedPorts[p]; !ok {
			t.Errorf("%s publishes %s, which the image does not expose", line, p)
		}
	}
	args := cfg.Config.Cmd
	if i+1 < len(words) {
		args = words[i+1:]
	}
	cmd := exec.Command(cfg.Config.Entrypoint[0], append(cfg.Config.Entrypoint[1:], args...)...)
	cmd.Env = append(slices.Clone(cfg.Config.Env), env...)
	var uid, gid uint32
	if _, err := fmt.Sscanf(cfg.Config.User, "%d:%d", &uid, &gid); err != nil {
		t.Fatalf("user %q: %v", cfg.Config.User, err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: uid, Gid: gid}, Pdeathsig: syscall.SIGKILL}
	cmd.Dir = cfg.Config.WorkingDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if !detached {
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, stderr.String())
		}
		return stdout.String()
	}
	db := testredis.New(t)
	httpAddr := testbinary.FreeAddr(t)
	cmd.Env = append(cmd.Env, "FLAPJACK_REDIS_URL="+db.URL(), "FLAPJACK_HTTP_ADDR="+httpAddr, "FLAPJACK_WEB_ADDR="+testbinary.FreeAddr(t))
	serve(t, line, cmd, httpAddr, &stderr)
	return stdout.String()
}

// serve starts cmd, waits for /readyz on addr, and stops it with SIGTERM, expecting exit 0.
func serve(t *testing.T, what string, cmd *exec.Cmd, addr string, stderr *bytes.Buffer) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for ready := false; !ready; {
		resp, err := client.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			ready = resp.StatusCode == http.StatusOK
		}
		select {
		case err := <-done:
			t.Fatalf("%s exited before /readyz answered: %v\n%s", what, err, stderr.String())
		default:
		}
		if !ready && time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-done
			t.Fatalf("%s: /readyz not 200 within 30s\n%s", what, stderr.String())
		}
		if !ready {
			time.Sleep(50 * time.Millisecond)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s after SIGTERM: %v, want exit 0\n%s", what, err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%s: still running 30s after SIGTERM", what)
	}
}
