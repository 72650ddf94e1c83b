package app

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFillFromBuildInfo(t *testing.T) {
	vcs := []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "0123abcd"},
		{Key: "vcs.time", Value: "2026-11-25T11:23:01Z"},
		{Key: "vcs.modified", Value: "false"},
	}
	tests := []struct {
		name     string
		ldflags  Build
		main     string
		settings []debug.BuildSetting
		want     Build
	}{
		{name: "go install of a tag", main: "v0.1.0", want: Build{Version: "0.1.0"}},
		{name: "go install of a commit", main: "v0.1.1-0.20261125112301-0123abcd0000", settings: vcs,
			want: Build{Version: "0.1.1-0.20261125112301-0123abcd0000", Commit: "0123abcd", Date: "2026-11-25T11:23:01Z"}},
		{name: "go build in a checkout", main: "(devel)", settings: vcs,
			want: Build{Commit: "0123abcd", Date: "2026-11-25T11:23:01Z"}},
		{name: "uncommitted changes", main: "(devel)",
			settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}},
			want:     Build{Commit: "0123abcd+dirty"}},
		{name: "ldflags win", ldflags: Build{Version: "1.2.3", Commit: "feed", Date: "2026-01-01T00:00:00Z"},
			main: "v0.1.0", settings: vcs, want: Build{Version: "1.2.3", Commit: "feed", Date: "2026-01-01T00:00:00Z"}},
	}
	for _, tt := range tests {
		got := tt.ldflags
		fillFromBuildInfo(&got, &debug.BuildInfo{Main: debug.Module{Path: "github.com/mockd/mockd", Version: tt.main}, Settings: tt.settings})
		if got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestBuildString(t *testing.T) {
	got := Build{Version: "0.1.0", Commit: "0123abcd", GoVersion: "go1.26.8", Platform: "linux/amd64"}.String()
	want := "mockd 0.1.0 (Mountebank 2.9.1 API)\ncommit: 0123abcd\ndate:   unknown\ngo:     go1.26.8 linux/amd64\n"
	if got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if v := BuildInfo().Version; v == "" || strings.HasPrefix(v, "v") {
		t.Errorf("BuildInfo().Version = %q, want a version without a leading v", v)
	}
}
