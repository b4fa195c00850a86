package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The image's user: a fixed numeric id, so Kubernetes' runAsNonRoot can verify it without
// reading /etc/passwd; the passwd entry names it for ps and logs.
const (
	imageUID  = 10001
	imageUser = "10001:10001"
	// imageBinary is where the binary sits in the image, as in the Debian package.
	imageBinary = "/usr/bin/flapjack"
	// imageName is the repository the archive tags: `docker load` names the image flapjack:<version>
	// and flapjack:latest.
	imageName = "flapjack"
)

// imagePorts are the web UI's and the HTTP API's (web.addr, http.addr).
var imagePorts = []string{"3080/tcp", "3081/tcp"}

// buildImage writes the image as a docker-archive to o.out: one layer over nothing, holding the
// static binary, the CA bundle, the time zone database and passwd/group entries for the user.
func buildImage(o options) (string, error) {
	tag, err := imageTag(o.version)
	if err != nil {
		return "", err
	}
	layerTar, err := imageLayer(o)
	if err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return "", fmt.Errorf("layer: %w", err)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{Architecture: "amd64", OS: "linux", RootFS: v1.RootFS{Type: "layers"}})
	if err != nil {
		return "", fmt.Errorf("base config: %w", err)
	}
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{
		Created: v1.Time{Time: o.created}, CreatedBy: "flapjack-package image", Comment: "flapjack " + o.version,
	}})
	if err != nil {
		return "", fmt.Errorf("append layer: %w", err)
	}
	if img, err = mutate.Config(img, imageConfig(o)); err != nil {
		return "", fmt.Errorf("image config: %w", err)
	}
	if img, err = mutate.CreatedAt(img, v1.Time{Time: o.created}); err != nil {
		return "", fmt.Errorf("image time: %w", err)
	}
	refs := map[name.Reference]v1.Image{}
	for _, t := range []string{tag, "latest"} {
		ref, err := name.NewTag(imageName + ":" + t)
		if err != nil {
			return "", fmt.Errorf("tag %q: %w", t, err)
		}
		refs[ref] = img
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return "", err
	}
	if err := tarball.MultiRefWriteToFile(o.out, refs); err != nil {
		return "", fmt.Errorf("write %s: %w", o.out, err)
	}
	return o.out, nil
}

// imageConfig is how the image runs: `flapjack server` as the unprivileged user, listening on
// every interface of the container (flapjack's own defaults are loopback only, which a published
// port cannot reach).
func imageConfig(o options) v1.Config {
	ports := map[string]struct{}{}
	for _, p := range imagePorts {
		ports[p] = struct{}{}
	}
	return v1.Config{
		Entrypoint:   []string{imageBinary},
		Cmd:          []string{"server"},
		User:         imageUser,
		WorkingDir:   "/",
		ExposedPorts: ports,
		Env: []string{
			"PATH=/usr/bin:/bin",
			"FLAPJACK_HTTP_ADDR=0.0.0.0:3081",
			"FLAPJACK_WEB_ADDR=0.0.0.0:3080",
		},
		Labels: map[string]string{
			"org.opencontainers.image.title":    "flapjack",
			"org.opencontainers.image.version":  o.version,
			"org.opencontainers.image.source":   o.source,
			"org.opencontainers.image.licenses": o.licence,
			"org.opencontainers.image.created":  o.created.Format(time.RFC3339),
		},
	}
}

// imageLayer is the layer's tar: directories before their contents, every entry owned by root
// and stamped o.created, so two builds of one commit give the same digest.
func imageLayer(o options) ([]byte, error) {
	var buf bytes.Buffer
	w := &layerWriter{tw: tar.NewWriter(&buf), mtime: o.created}
	for _, d := range []string{"etc", "etc/ssl", "etc/ssl/certs", "usr", "usr/bin", "usr/share"} {
		w.dir(d, 0o755)
	}
	w.dir("tmp", 0o1777)
	w.file("etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nflapjack:x:%d:%d:flapjack:/nonexistent:/sbin/nologin\n", imageUID, imageUID)))
	w.file("etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nflapjack:x:%d:\n", imageUID)))
	w.copyFile("etc/ssl/certs/ca-certificates.crt", 0o644, o.caCerts)
	w.copyFile("usr/bin/flapjack", 0o755, o.binary)
	w.copyTree("usr/share/zoneinfo", o.zoneinfo)
	if w.err != nil {
		return nil, w.err
	}
	if err := w.tw.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return buf.Bytes(), nil
}

// layerWriter writes tar entries until the first error, which it keeps.
type layerWriter struct {
	tw    *tar.Writer
	mtime time.Time
	err   error
}

func (w *layerWriter) write(h *tar.Header, body []byte) {
	if w.err != nil {
		return
	}
	h.ModTime, h.Uname, h.Gname, h.Format = w.mtime, "root", "root", tar.FormatPAX
	if w.err = w.tw.WriteHeader(h); w.err != nil {
		w.err = fmt.Errorf("layer %s: %w", h.Name, w.err)
		return
	}
	if _, err := w.tw.Write(body); err != nil {
		w.err = fmt.Errorf("layer %s: %w", h.Name, err)
	}
}

func (w *layerWriter) dir(name string, mode int64) {
	w.write(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode}, nil)
}

func (w *layerWriter) file(name string, mode int64, body []byte) {
	w.write(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(body))}, body)
}

func (w *layerWriter) copyFile(name string, mode int64, from string) {
	body, err := os.ReadFile(from)
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("layer %s: %w", name, err)
	}
	w.file(name, mode, body)
}

// copyTree copies the directory from to name: directories, regular files and symbolic links
// (Debian's zoneinfo links aliases to their zones).
func (w *layerWriter) copyTree(name, from string) {
	if w.err != nil {
		return
	}
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, p)
		if err != nil {
			return err
		}
		target := filepath.ToSlash(filepath.Join(name, rel))
		switch {
		case d.IsDir():
			w.dir(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			w.write(&tar.Header{Typeflag: tar.TypeSymlink, Name: target, Linkname: link, Mode: 0o777}, nil)
		case d.Type().IsRegular():
			w.copyFile(target, 0o644, p)
		}
		return w.err
	})
	if err != nil && w.err == nil {
		w.err = fmt.Errorf("layer %s from %s: %w", name, from, err)
	}
}
