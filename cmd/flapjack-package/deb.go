package main

import (
	"bytes"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/deb"
	"github.com/goreleaser/nfpm/v2/files"
)

// debian holds the maintainer scripts: the flapjack user made at install, removed at purge.
//
//go:embed debian/postinst debian/prerm debian/postrm
var debian embed.FS

const (
	// debUnitDir is where Debian's systemd looks for packaged units.
	debUnitDir = "/lib/systemd/system"
	debDocDir  = "/usr/share/doc/flapjack"
	// sourceBinary is where the units of etc/systemd/ expect a binary installed from source; the
	// package's is debBinary.
	sourceBinary = "/usr/local/bin/flapjack"
	debBinary    = "/usr/bin/flapjack"
	debConfig    = "/etc/flapjack/flapjack.yaml"
	// debMaintainer is a placeholder until the project names one (the .invalid domain says so).
	debMaintainer = "flapjack developers <flapjack@flapjackgo.invalid>"
)

// buildDeb writes flapjack_<version>_amd64.deb to o.outDir.
func buildDeb(o options) (string, error) {
	version, err := debVersion(o.version)
	if err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp("", "flapjack-deb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	contents, err := debContents(o, stage)
	if err != nil {
		return "", err
	}
	scripts, err := stageScripts(stage)
	if err != nil {
		return "", err
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:          "flapjack",
		Arch:          "amd64",
		Platform:      "linux",
		Version:       version,
		VersionSchema: "none",
		Section:       "net",
		Priority:      "optional",
		Maintainer:    debMaintainer,
		Homepage:      o.source,
		License:       o.licence,
		MTime:         o.created,
		Description: "monitoring event processor and notification router\n" +
			"flapjack takes check results from Nagios, Sensu and scripts, keeps each check's\n" +
			"state and history in Redis (Flapjack 1.x's data layout), decides when a failure is\n" +
			"worth waking someone and delivers alerts over Jabber, PagerDuty, email, SMS, Slack\n" +
			"and webhooks.",
		Overridables: nfpm.Overridables{
			Depends:    []string{"adduser"},
			Recommends: []string{"redis-server", "ca-certificates", "tzdata"},
			Contents:   contents,
			Scripts:    scripts,
			Deb:        nfpm.Deb{Compression: "xz"},
		},
	})
	if err := os.MkdirAll(o.outDir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(o.outDir, deb.Default.ConventionalFileName(info))
	var pkg bytes.Buffer
	if err := deb.Default.Package(info, &pkg); err != nil {
		return "", fmt.Errorf("package %s: %w", out, err)
	}
	if err := os.WriteFile(out, pkg.Bytes(), 0o644); err != nil {
		return "", err
	}
	return out, nil
}

// debContents lists the package's files, writing to stage those made for it: the units with the
// packaged binary's path and the --help text.
func debContents(o options, stage string) (files.Contents, error) {
	file := func(src, dst string, mode os.FileMode) *files.Content {
		return &files.Content{Source: src, Destination: dst, FileInfo: &files.ContentFileInfo{Mode: mode, Owner: "root", Group: "root"}}
	}
	c := files.Contents{
		file(o.binary, debBinary, 0o755),
		{Source: filepath.Join(o.root, "etc", "flapjack.yaml.example"), Destination: debConfig, Type: files.TypeConfigNoReplace,
			FileInfo: &files.ContentFileInfo{Mode: 0o640, Owner: "root", Group: "root"}},
		file(filepath.Join(o.root, "README.md"), debDocDir+"/README.md", 0o644),
		file(filepath.Join(o.root, "CHANGELOG.md"), debDocDir+"/CHANGELOG.md", 0o644),
	}
	for _, glob := range []string{"etc/deploy/*.yaml", "etc/prometheus/*.yml", "etc/grafana/*.json"} {
		found, err := filepath.Glob(filepath.Join(o.root, glob))
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			dst := debDocDir + "/" + strings.TrimPrefix(filepath.ToSlash(filepath.Dir(glob)), "etc/") + "/" + filepath.Base(f)
			c = append(c, file(f, dst, 0o644))
		}
	}
	units, err := stageUnits(o.root, stage)
	if err != nil {
		return nil, err
	}
	for _, u := range units {
		c = append(c, file(u, debUnitDir+"/"+filepath.Base(u), 0o644))
	}
	help, err := stageHelp(o.binary, stage)
	if err != nil {
		return nil, err
	}
	return append(c, file(help, debDocDir+"/flapjack-help.txt", 0o644)), nil
}

// stageUnits copies etc/systemd/'s units to stage with ExecStart pointing at the package's binary.
func stageUnits(root, stage string) ([]string, error) {
	found, err := filepath.Glob(filepath.Join(root, "etc", "systemd", "*.service"))
	if err != nil || len(found) == 0 {
		return nil, fmt.Errorf("no units under %s/etc/systemd (%v)", root, err)
	}
	var out []string
	for _, f := range found {
		body, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if !bytes.Contains(body, []byte(sourceBinary)) {
			return nil, fmt.Errorf("%s does not run %s: the package would ship it pointing elsewhere", f, sourceBinary)
		}
		dst := filepath.Join(stage, filepath.Base(f))
		if err := os.WriteFile(dst, bytes.ReplaceAll(body, []byte(sourceBinary), []byte(debBinary)), 0o644); err != nil {
			return nil, err
		}
		out = append(out, dst)
	}
	return out, nil
}

// stageHelp writes the binary's --help and each command's to stage: the package's manual.
func stageHelp(binary, stage string) (string, error) {
	top, err := exec.Command(binary, "--help").Output()
	if err != nil {
		return "", fmt.Errorf("%s --help: %w", binary, err)
	}
	var b bytes.Buffer
	b.Write(top)
	for _, command := range helpCommands(string(top)) {
		out, err := exec.Command(binary, command, "--help").Output()
		if err != nil {
			return "", fmt.Errorf("%s %s --help: %w", binary, command, err)
		}
		fmt.Fprintf(&b, "\n\n==== flapjack %s ====\n\n", command)
		b.Write(out)
	}
	dst := filepath.Join(stage, "flapjack-help.txt")
	return dst, os.WriteFile(dst, b.Bytes(), 0o644)
}

// helpCommands are the command names of urfave/cli's COMMANDS: section.
func helpCommands(help string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.HasPrefix(line, "COMMANDS:"):
			in = true
		case in && strings.TrimSpace(line) == "":
			return out
		case in && strings.HasPrefix(line, "     "):
			// a wrapped usage line
		case in:
			name := strings.TrimSuffix(strings.Fields(line)[0], ",")
			if name != "help" {
				out = append(out, name)
			}
		}
	}
	return out
}

// stageScripts writes the embedded maintainer scripts to stage, where nfpm reads them.
func stageScripts(stage string) (nfpm.Scripts, error) {
	var s nfpm.Scripts
	for _, script := range []struct {
		name string
		to   *string
	}{{"postinst", &s.PostInstall}, {"prerm", &s.PreRemove}, {"postrm", &s.PostRemove}} {
		body, err := debian.ReadFile("debian/" + script.name)
		if err != nil {
			return s, err
		}
		*script.to = filepath.Join(stage, script.name)
		if err := os.WriteFile(*script.to, body, 0o755); err != nil {
			return s, err
		}
	}
	return s, nil
}
