package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is the release and revision the VCS commit, set at build time: go build -ldflags
// "-X main.version=v1.2.3 -X main.revision=$(git rev-parse HEAD)" (make image does). Without them, the
// build info's module version ("(devel)" for a local build) and vcs.revision (which go build embeds
// from a git clone, but not from a git worktree) are used.
var version, revision string

// buildInfo is what the manager knows about its own build.
type buildInfo struct {
	Version   string // release (ldflags) or module version
	Revision  string // VCS commit the binary was built from (go build embeds it from git)
	Time      string // time of that commit
	Modified  bool   // the work tree had uncommitted changes
	GoVersion string
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Revision: revision, GoVersion: runtime.Version()}
	if info, ok := debug.ReadBuildInfo(); ok {
		if b.Version == "" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Revision == "" {
					b.Revision = s.Value
				}
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	return b
}

// String is the line --version prints.
func (b buildInfo) String() string {
	rev := b.Revision
	if rev == "" {
		rev = "unknown"
	}
	if b.Modified {
		rev += " (modified)"
	}
	return fmt.Sprintf("apimsync %s, revision %s, %s %s/%s", b.Version, rev, b.GoVersion, runtime.GOOS, runtime.GOARCH)
}
