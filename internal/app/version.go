package app

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version, Commit and Date describe the build. Release builds set them with
// -ldflags "-X github.com/mockd/mockd/internal/app.Version=1.0.0 -X ….Commit=… -X ….Date=…";
// when they are empty, BuildInfo reads the module version and the VCS stamp that `go build` and
// `go install` record in the binary.
var (
	Version string
	Commit  string
	Date    string
)

// Build describes one mockd binary.
type Build struct {
	Version   string // e.g. "1.0.0", or a Go pseudo-version for an untagged go install
	Commit    string // VCS revision, "" when unknown; "+dirty" marks uncommitted changes
	Date      string // commit or build time (RFC 3339), "" when unknown
	GoVersion string // e.g. "go1.26.8"
	Platform  string // e.g. "linux/amd64"
}

// devVersion is the version of a binary that carries neither ldflags nor a module version.
const devVersion = "1.0.0-dev"

// BuildInfo returns what is known about the running binary: the ldflags first, then the
// module's build info (module version, vcs.revision, vcs.time, vcs.modified).
func BuildInfo() Build {
	b := Build{Version: Version, Commit: Commit, Date: Date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		fillFromBuildInfo(&b, info)
	}
	if b.Version == "" {
		b.Version = devVersion
	}
	return b
}

// fillFromBuildInfo sets what the ldflags left empty from info.
func fillFromBuildInfo(b *Build, info *debug.BuildInfo) {
	if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = strings.TrimPrefix(info.Main.Version, "v")
	}
	var revision, vcsTime string
	modified := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if b.Commit == "" && revision != "" {
		b.Commit = revision
		if modified {
			b.Commit += "+dirty"
		}
	}
	if b.Date == "" {
		b.Date = vcsTime
	}
}

// String is what `mockd version` and `mockd --version` print.
func (b Build) String() string {
	orUnknown := func(s string) string {
		if s == "" {
			return "unknown"
		}
		return s
	}
	return fmt.Sprintf("mockd %s (Mountebank %s API)\ncommit: %s\ndate:   %s\ngo:     %s %s\n",
		b.Version, MountebankVersion, orUnknown(b.Commit), orUnknown(b.Date), b.GoVersion, b.Platform)
}
