// Package ociimage builds the manager's container image without a container daemon, with
// go-containerregistry: a static Go binary on an empty base that holds only CA certificates and a
// non-root user, one image per architecture under an OCI image index.
//
// The archive it writes is an OCI image layout in a tar file that also carries a Docker
// manifest.json, so that `docker load` (any version), `podman load` and registries (through Push) all
// take it.
package ociimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// UID and GID are the user the manager runs as: distroless' "nonroot".
	UID = 65532
	GID = 65532
	// Entrypoint is where the manager binary is in the image.
	Entrypoint = "/manager"
	// DefaultCACerts is Debian's bundle of CA certificates (package ca-certificates).
	DefaultCACerts = "/etc/ssl/certs/ca-certificates.crt"
	// caPath is where Go's crypto/x509 looks first on Linux.
	caPath = "etc/ssl/certs/ca-certificates.crt"
)

// OCI label and annotation keys (https://github.com/opencontainers/image-spec/blob/main/annotations.md).
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelCreated  = "org.opencontainers.image.created"
	LabelTitle    = "org.opencontainers.image.title"
	LabelDesc     = "org.opencontainers.image.description"
	LabelRefName  = "org.opencontainers.image.ref.name"
)

// Options say what goes into the image.
type Options struct {
	// Binaries maps a GOARCH (amd64, arm64) to the path of a static linux binary of the manager.
	Binaries map[string]string
	// CACerts is the PEM bundle of CA certificates put at /etc/ssl/certs/ca-certificates.crt
	// (DefaultCACerts when empty).
	CACerts string
	// Version and Revision (the VCS commit) become OCI labels; Source is the repository's URL.
	Version, Revision, Source string
	// Created is the image's creation time, and every file's time in its layers: the time of the commit
	// makes the build reproducible (same sources, same digests). Zero is the Unix epoch.
	Created time.Time
}

// Build returns the image index of the manager, one image per entry of o.Binaries.
func Build(o Options) (v1.ImageIndex, error) {
	if len(o.Binaries) == 0 {
		return nil, fmt.Errorf("no binaries to put in the image")
	}
	if o.CACerts == "" {
		o.CACerts = DefaultCACerts
	}
	if o.Created.IsZero() {
		o.Created = time.Unix(0, 0)
	}
	o.Created = o.Created.UTC()
	certs, err := os.ReadFile(o.CACerts)
	if err != nil {
		return nil, fmt.Errorf("CA certificates: %w", err)
	}
	if !bytes.Contains(certs, []byte("BEGIN CERTIFICATE")) {
		return nil, fmt.Errorf("CA certificates: %s holds no PEM certificate", o.CACerts)
	}
	base, err := baseLayer(certs, o.Created)
	if err != nil {
		return nil, err
	}
	arches := make([]string, 0, len(o.Binaries))
	for a := range o.Binaries {
		arches = append(arches, a)
	}
	sort.Strings(arches)
	labels := o.labels()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range arches {
		img, err := archImage(base, o.Binaries[arch], arch, labels, o.Created)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arch, err)
		}
		p := platform(arch)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.Annotations(idx, labels).(v1.ImageIndex), nil
}

func (o Options) labels() map[string]string {
	l := map[string]string{
		LabelTitle:   "apimsync",
		LabelDesc:    "apimsync: syncs Kubernetes custom resources into the 3scale Account Management API",
		LabelCreated: o.Created.Format(time.RFC3339),
	}
	for k, v := range map[string]string{LabelVersion: o.Version, LabelRevision: o.Revision, LabelSource: o.Source} {
		if v != "" {
			l[k] = v
		}
	}
	return l
}

func platform(arch string) v1.Platform {
	p := v1.Platform{OS: "linux", Architecture: arch}
	if arch == "arm64" {
		p.Variant = "v8"
	}
	return p
}

func archImage(base v1.Layer, binary, arch string, labels map[string]string, created time.Time) (v1.Image, error) {
	bin, err := os.ReadFile(binary)
	if err != nil {
		return nil, err
	}
	if err := checkStatic(bin, arch); err != nil {
		return nil, fmt.Errorf("%s: %w", binary, err)
	}
	app, err := layer([]file{{name: strings.TrimPrefix(Entrypoint, "/"), mode: 0o755, data: bin}}, created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "apimsync: CA certificates, /etc/passwd with nonroot (65532)", Comment: "base"}},
		mutate.Addendum{Layer: app, History: v1.History{Created: v1.Time{Time: created}, CreatedBy: "apimsync: " + Entrypoint}})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	p := platform(arch)
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Created = v1.Time{Time: created}
	cf.Author = "apimsync"
	cf.Config = v1.Config{
		Entrypoint: []string{Entrypoint},
		User:       fmt.Sprintf("%d:%d", UID, GID),
		WorkingDir: "/",
		Env:        []string{"SSL_CERT_FILE=/" + caPath},
		Labels:     labels,
	}
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		return nil, err
	}
	return mutate.Annotations(img, labels).(v1.Image), nil
}

// checkStatic fails unless bin is a static ELF binary for linux/arch (no interpreter: it needs no libc,
// which the image does not have).
func checkStatic(bin []byte, arch string) error {
	info, err := elfInfo(bin)
	if err != nil {
		return err
	}
	if info.arch != arch {
		return fmt.Errorf("built for %s, not %s", info.arch, arch)
	}
	if info.interp {
		return fmt.Errorf("dynamically linked (build with CGO_ENABLED=0)")
	}
	return nil
}

type file struct {
	name     string
	mode     int64
	data     []byte
	dir      bool
	uid, gid int
}

// baseLayer is the image's base: what distroless/static has that apimsync uses.
func baseLayer(certs []byte, created time.Time) (v1.Layer, error) {
	passwd := "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
		fmt.Sprintf("nonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", UID, GID)
	group := fmt.Sprintf("root:x:0:\nnobody:x:65534:\nnonroot:x:%d:\n", GID)
	return layer([]file{
		{name: "etc", dir: true, mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte(group)},
		{name: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte(passwd)},
		{name: "etc/ssl", dir: true, mode: 0o755},
		{name: "etc/ssl/certs", dir: true, mode: 0o755},
		{name: caPath, mode: 0o644, data: certs},
		{name: "home", dir: true, mode: 0o755},
		{name: "home/nonroot", dir: true, mode: 0o700, uid: UID, gid: GID},
		{name: "tmp", dir: true, mode: 0o1777},
	}, created)
}

// layer makes a gzip-compressed OCI layer of files, in their order, with the given time.
func layer(files []file, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.name, Mode: f.mode, Uid: f.uid, Gid: f.gid, ModTime: created, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
}

// BuildBinary builds the manager (package pkg, e.g. ./cmd/manager, run from dir) as a static linux
// binary for arch into out, with version and revision in main.version and main.revision, which the
// binary reports with --version. The Go toolchain also embeds the VCS state when dir is in a git clone.
func BuildBinary(ctx context.Context, dir, pkg, arch, version, revision, out string) error {
	ldflags := "-s -w"
	if version != "" {
		ldflags += " -X main.version=" + version
	}
	if revision != "" {
		ldflags += " -X main.revision=" + revision
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=auto", "-ldflags", ldflags, "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if raw, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s for linux/%s: %w\n%s", pkg, arch, err, raw)
	}
	return nil
}

// ParsePlatforms parses "linux/amd64,linux/arm64" into GOARCHes.
func ParsePlatforms(s string) ([]string, error) {
	var arches []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		goos, arch, ok := strings.Cut(p, "/")
		if !ok || goos != "linux" || (arch != "amd64" && arch != "arm64") {
			return nil, fmt.Errorf("platform %q: want linux/amd64 or linux/arm64", p)
		}
		arches = append(arches, arch)
	}
	if len(arches) == 0 {
		return nil, fmt.Errorf("no platform")
	}
	return arches, nil
}
