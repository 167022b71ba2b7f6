package ociimage

import (
	"archive/tar"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// WriteArchive writes idx to out as a tar of an OCI image layout (oci-layout, index.json, blobs/) named
// ref, plus a Docker manifest.json for one of its images: the one for dockerArch (the host's
// architecture when empty, else the first). OCI-aware loaders (podman load, docker load since Docker
// 25, skopeo, crane) see the whole index; older docker load reads manifest.json.
func WriteArchive(idx v1.ImageIndex, ref, out, dockerArch string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	dir, err := os.MkdirTemp("", "apimsync-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		LabelRefName:               tag.TagStr(),
		"io.containerd.image.name": tag.Name(),
	})); err != nil {
		return err
	}
	img, err := pickImage(idx, dockerArch)
	if err != nil {
		return err
	}
	dm, err := dockerManifest(img, tag.String())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), dm, 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := tarDir(dir, tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, out)
}

// pickImage returns the image of idx for arch (the host's when empty), or its first.
func pickImage(idx v1.ImageIndex, arch string) (v1.Image, error) {
	if arch == "" {
		arch = runtime.GOARCH
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) == 0 {
		return nil, fmt.Errorf("the image index is empty")
	}
	chosen := im.Manifests[0]
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.Architecture == arch {
			chosen = d
			break
		}
	}
	return idx.Image(chosen.Digest)
}

// dockerManifest is the manifest.json of `docker save`, pointing into the layout's blobs.
func dockerManifest(img v1.Image, tag string) ([]byte, error) {
	cfg, err := img.ConfigName()
	if err != nil {
		return nil, err
	}
	layers, err := img.Layers()
	if err != nil {
		return nil, err
	}
	entry := struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{Config: blobPath(cfg), RepoTags: []string{tag}}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return nil, err
		}
		entry.Layers = append(entry.Layers, blobPath(d))
	}
	return json.Marshal([]any{entry})
}

func blobPath(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// tarDir writes the files under dir to a tar file out, sorted, with fixed times and owners.
func tarDir(dir, out string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		paths = append(paths, p)
		return nil
	}); err != nil {
		return err
	}
	slices.Sort(paths)
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		h := &tar.Header{Name: rel, Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatPAX}
		if fi.IsDir() {
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, rel+"/", 0o755
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		h.Typeflag, h.Size = tar.TypeReg, fi.Size()
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(tw, src)
		src.Close()
		if err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// ReadArchive reads the image index of an archive WriteArchive wrote. It unpacks the archive into a
// temporary folder, which cleanup removes (the index reads its blobs from there until then).
func ReadArchive(archive string) (idx v1.ImageIndex, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "apimsync-image-")
	if err != nil {
		return nil, nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	if err := untar(archive, dir); err != nil {
		return nil, nil, err
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, nil, err
	}
	im, err := top.IndexManifest()
	if err != nil {
		return nil, nil, err
	}
	if len(im.Manifests) != 1 || !im.Manifests[0].MediaType.IsIndex() {
		return nil, nil, fmt.Errorf("%s: want one image index in index.json, got %d manifests", archive, len(im.Manifests))
	}
	idx, err = top.ImageIndex(im.Manifests[0].Digest)
	return idx, cleanup, err
}

func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !filepath.IsLocal(h.Name) {
			return fmt.Errorf("%s: unsafe path %q", archive, h.Name)
		}
		dst := filepath.Join(dir, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			out, err := os.Create(dst)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// Push pushes idx to the registry as ref, with the credentials of `docker login` or `podman login`
// (~/.docker/config.json, $REGISTRY_AUTH_FILE, ${XDG_RUNTIME_DIR}/containers/auth.json). A registry on
// localhost is spoken to over plain HTTP.
func Push(ctx context.Context, idx v1.ImageIndex, ref string, opts ...remote.Option) error {
	r, err := name.ParseReference(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	return remote.WriteIndex(r, idx, opts...)
}
