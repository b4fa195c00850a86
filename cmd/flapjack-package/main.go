// Command flapjack-package builds what operators install (`make image`, `make deb`): an OCI
// image written as a docker-archive file, without a Docker engine and without pulling a base
// image, and a Debian package. It packages a flapjack binary built beforehand (static, by the
// Makefile) with the repository's systemd units, example configuration and docs; it is a build
// tool and not part of the shipped binary.
//
//	flapjack-package image --binary B --version V --out bin/flapjack-image.tar
//	flapjack-package deb   --binary B --version V --out-dir bin
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// options are the flags both subcommands share, and each one's own.
type options struct {
	binary   string
	version  string // git describe output, mapped per format (imageTag, debVersion)
	root     string // the repository: etc/, README.md, CHANGELOG.md
	source   string
	licence  string
	created  time.Time // every file's and the image's time, so builds of one commit are identical
	out      string    // image: the archive written
	outDir   string    // deb: the directory the .deb is written to
	caCerts  string    // image: the CA bundle copied in
	zoneinfo string    // image: the time zone database copied in
}

func main() {
	if len(os.Args) < 2 || (os.Args[1] != "image" && os.Args[1] != "deb") {
		fmt.Fprintln(os.Stderr, "usage: flapjack-package image|deb [flags] (-h for the flags)")
		os.Exit(2)
	}
	what := os.Args[1]
	o, err := parseFlags(what, os.Args[2:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "flapjack-package:", err)
		os.Exit(2)
	}
	var written string
	if what == "image" {
		written, err = buildImage(o)
	} else {
		written, err = buildDeb(o)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "flapjack-package %s: %v\n", what, err)
		os.Exit(1)
	}
	info, err := os.Stat(written)
	if err != nil {
		fmt.Fprintln(os.Stderr, "flapjack-package:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s (%.1f MB)\n", written, float64(info.Size())/1e6)
}

func parseFlags(what string, args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet(what, flag.ContinueOnError)
	fs.StringVar(&o.binary, "binary", "", "the flapjack binary to package (linux/amd64, built with CGO_ENABLED=0)")
	fs.StringVar(&o.version, "version", "", "the version, as `git describe --tags --always --dirty` prints it")
	fs.StringVar(&o.root, "root", ".", "the repository root (etc/, README.md, CHANGELOG.md)")
	fs.StringVar(&o.source, "source", "https://github.com/flapjackgo/flapjack", "where the source is (image label, package homepage)")
	fs.StringVar(&o.licence, "licence", "NOASSERTION", "SPDX licence expression (image label, package field)")
	epoch := fs.Int64("created", 0, "Unix time stamped on every file and the image (the commit's time); 0 is 1970")
	fs.StringVar(&o.out, "out", "bin/flapjack-image.tar", "image: the docker-archive file to write")
	fs.StringVar(&o.outDir, "out-dir", "bin", "deb: the directory to write flapjack_<version>_amd64.deb to")
	fs.StringVar(&o.caCerts, "ca-certs", "/etc/ssl/certs/ca-certificates.crt", "image: the CA bundle to copy in (Debian's ca-certificates)")
	fs.StringVar(&o.zoneinfo, "zoneinfo", "/usr/share/zoneinfo", "image: the time zone database to copy in (Debian's tzdata)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.binary == "" || o.version == "" {
		return o, errors.New("--binary and --version are required")
	}
	if _, err := os.Stat(o.binary); err != nil {
		return o, fmt.Errorf("--binary: %w", err)
	}
	o.created = time.Unix(*epoch, 0).UTC()
	root, err := filepath.Abs(o.root)
	if err != nil {
		return o, fmt.Errorf("--root: %w", err)
	}
	o.root = root
	return o, nil
}
