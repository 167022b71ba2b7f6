package ociimage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// fakeELF writes a minimal ELF64 executable header for machine (62 x86-64, 183 AArch64), with a
// PT_INTERP program header when dynamic, and a payload that tells the binaries apart.
func fakeELF(t *testing.T, machine uint16, dynamic bool, payload string) string {
	t.Helper()
	b := make([]byte, 64)
	copy(b, "\x7fELF")
	b[4], b[5], b[6] = 2, 1, 1 // 64-bit, little endian, version 1
	le := binary.LittleEndian
	le.PutUint16(b[16:], 2) // ET_EXEC
	le.PutUint16(b[18:], machine)
	le.PutUint32(b[20:], 1)
	le.PutUint16(b[52:], 64) // header size
	le.PutUint16(b[54:], 56) // program header size
	le.PutUint16(b[58:], 64) // section header size
	if dynamic {
		le.PutUint64(b[32:], 64) // program headers right after the header
		le.PutUint16(b[56:], 1)
		ph := make([]byte, 56)
		le.PutUint32(ph[0:], 3) // PT_INTERP
		b = append(b, ph...)
	}
	b = append(b, payload...)
	path := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func options(t *testing.T) Options {
	return Options{
		Binaries: map[string]string{"amd64": fakeELF(t, 62, false, "amd64"), "arm64": fakeELF(t, 183, false, "arm64")},
		Version:  "v1.2.3", Revision: "0123abcd", Source: "https://example.test/apimsync", Created: time.Unix(1700000000, 0),
	}
}

// TestBuildIndex: one image per architecture under an OCI index, with the platforms, the config and the
// labels the cluster and the registries read.
func TestBuildIndex(t *testing.T) {
	idx, err := Build(options(t))
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if im.MediaType != "application/vnd.oci.image.index.v1+json" || len(im.Manifests) != 2 {
		t.Fatalf("index %s with %d manifests, want an OCI index of 2", im.MediaType, len(im.Manifests))
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Architecture != d.Platform.Architecture || cf.OS != "linux" {
			t.Errorf("%s: config says %s/%s", d.Platform, cf.OS, cf.Architecture)
		}
		if !slices.Equal(cf.Config.Entrypoint, []string{Entrypoint}) || cf.Config.User != "65532:65532" {
			t.Errorf("%s: entrypoint %q user %q", d.Platform, cf.Config.Entrypoint, cf.Config.User)
		}
		if cf.Config.Labels[LabelVersion] != "v1.2.3" || cf.Config.Labels[LabelRevision] != "0123abcd" || cf.Config.Labels[LabelCreated] != "2023-11-14T22:13:20Z" {
			t.Errorf("%s: labels %v", d.Platform, cf.Config.Labels)
		}
		if !cf.Created.Time.Equal(time.Unix(1700000000, 0)) {
			t.Errorf("%s: created %v", d.Platform, cf.Created)
		}
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64/v8"}) {
		t.Errorf("platforms %v", platforms)
	}
	if im.Annotations[LabelRevision] != "0123abcd" {
		t.Errorf("index annotations %v", im.Annotations)
	}
}

// TestBuildIsReproducible: the same inputs give the same digest; another time gives another.
func TestBuildIsReproducible(t *testing.T) {
	o := options(t)
	a, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	o.Created = o.Created.Add(time.Second)
	c, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	da, _ := a.Digest()
	db, _ := b.Digest()
	dc, _ := c.Digest()
	if da != db || da == dc {
		t.Errorf("digests %s, %s (same inputs) and %s (another time)", da, db, dc)
	}
}

// TestBuildRefusesWrongBinaries: a dynamically linked binary (the image has no libc), one for another
// architecture and a bundle without certificates are refused.
func TestBuildRefusesWrongBinaries(t *testing.T) {
	for name, o := range map[string]Options{
		"dynamic":   {Binaries: map[string]string{"amd64": fakeELF(t, 62, true, "")}},
		"wrongArch": {Binaries: map[string]string{"arm64": fakeELF(t, 62, false, "")}},
		"noCerts":   {Binaries: map[string]string{"amd64": fakeELF(t, 62, false, "")}, CACerts: fakeELF(t, 62, false, "")},
		"none":      {},
	} {
		if _, err := Build(o); err == nil {
			t.Errorf("%s: built", name)
		}
	}
}

// TestArchiveRoundTrip: WriteArchive's OCI layout reads back as the same index, and its Docker
// manifest.json names the image of the architecture asked for.
func TestArchiveRoundTrip(t *testing.T) {
	idx, err := Build(options(t))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "apimsync.tar")
	if err := WriteArchive(idx, "example.test/apimsync:v1", path, "arm64"); err != nil {
		t.Fatal(err)
	}
	back, cleanup, err := ReadArchive(path)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	d1, _ := idx.Digest()
	d2, err := back.Digest()
	if err != nil || d1 != d2 {
		t.Errorf("read back %s (%v), wrote %s", d2, err, d1)
	}
	docker, err := tarball.ImageFromPath(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := docker.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Architecture != "arm64" {
		t.Errorf("manifest.json names the %s image, want arm64", cf.Architecture)
	}
	if err := WriteArchive(idx, "not a name", path, ""); err == nil {
		t.Errorf("a bad image name was accepted")
	}
}

func TestParsePlatforms(t *testing.T) {
	got, err := ParsePlatforms("linux/amd64, linux/arm64")
	if err != nil || !slices.Equal(got, []string{"amd64", "arm64"}) {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"", "windows/amd64", "linux/s390x", "amd64"} {
		if _, err := ParsePlatforms(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
