// Command image builds and pushes the manager's container image without a container daemon (see
// internal/ociimage and docs/install.md). `make image` and `make image-push` run it:
//
//	go run ./cmd/image build --tag IMG --out bin/image/apimsync.tar [--platforms linux/amd64,linux/arm64]
//	go run ./cmd/image push --archive bin/image/apimsync.tar IMG
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apimsync/apimsync/internal/ociimage"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: image build|push [flags]")
	}
	switch args[0] {
	case "build":
		return build(ctx, args[1:])
	case "push":
		return push(ctx, args[1:])
	}
	return fmt.Errorf("unknown command %q: want build or push", args[0])
}

func build(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "Platforms of the image index, comma-separated (linux/amd64, linux/arm64).")
	tag := fs.String("tag", "ghcr.io/apimsync/apimsync:latest", "Name the archive gives the image (what docker load and podman load tag it as).")
	out := fs.String("out", "bin/image/apimsync.tar", "The archive to write: an OCI image layout in a tar, with a Docker manifest.json.")
	version := fs.String("version", "", "Version: the manager's --version and the org.opencontainers.image.version label.")
	revision := fs.String("revision", "", "VCS revision: the manager's --version and the org.opencontainers.image.revision label.")
	source := fs.String("source", "https://github.com/apimsync/apimsync", "The org.opencontainers.image.source label.")
	created := fs.String("created", os.Getenv("SOURCE_DATE_EPOCH"), "Creation time of the image and its files, in Unix seconds (default $SOURCE_DATE_EPOCH, else the Unix epoch): the commit's time makes builds reproducible.")
	certs := fs.String("ca-certs", ociimage.DefaultCACerts, "PEM bundle of CA certificates to put in the image.")
	dockerArch := fs.String("docker-arch", "", "Architecture of the image Docker's manifest.json names, for docker load before Docker 25 (default: this machine's).")
	pkg := fs.String("package", "./cmd/manager", "The Go package of the manager.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	arches, err := ociimage.ParsePlatforms(*platforms)
	if err != nil {
		return err
	}
	var when time.Time
	if *created != "" {
		secs, err := strconv.ParseInt(*created, 10, 64)
		if err != nil {
			return fmt.Errorf("--created %q: want Unix seconds", *created)
		}
		when = time.Unix(secs, 0)
	}
	binDir := filepath.Join(filepath.Dir(*out), "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	opts := ociimage.Options{Binaries: map[string]string{}, CACerts: *certs, Version: *version, Revision: *revision, Source: *source, Created: when}
	for _, arch := range arches {
		bin := filepath.Join(binDir, "manager-linux-"+arch)
		start := time.Now()
		if err := ociimage.BuildBinary(ctx, ".", *pkg, arch, *version, *revision, bin); err != nil {
			return err
		}
		fmt.Printf("built %s (%.0fs)\n", bin, time.Since(start).Seconds())
		opts.Binaries[arch] = bin
	}
	idx, err := ociimage.Build(opts)
	if err != nil {
		return err
	}
	if err := ociimage.WriteArchive(idx, *tag, *out, *dockerArch); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s for %s, index %s\n", *out, *tag, *platforms, digest)
	fmt.Printf("load it with `docker load -i %s` or `podman load -i %s`\n", *out, *out)
	return nil
}

func push(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	archive := fs.String("archive", "bin/image/apimsync.tar", "The archive `image build` wrote.")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: image push [--archive FILE] REGISTRY/NAME:TAG")
	}
	ref := fs.Arg(0)
	idx, cleanup, err := ociimage.ReadArchive(*archive)
	if err != nil {
		return err
	}
	defer cleanup()
	if err := ociimage.Push(ctx, idx, ref); err != nil {
		return fmt.Errorf("push %s: %w", ref, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("pushed %s@%s\n", ref, digest)
	return nil
}
