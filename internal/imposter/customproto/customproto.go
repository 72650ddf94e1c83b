// Package customproto runs Mountebank's custom protocols (--protofile): an imposter of a
// protocol the protofile names is served by a program mockd starts with the protocol's
// createCommand, as Mountebank's models/protocols.js starts it, and that program resolves each
// request it receives through the admin API (POST /imposters/:id/_requests, which the
// imposter core answers: imposter.ResolveCustom).
//
// Only the commands of the protofile the operator passed are run; nothing of an API request
// becomes a program or a shell word: the creation request's fields are one argument, its JSON,
// after the command's own words, and no shell is involved (Mountebank spawns without one).
package customproto

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mockd/mockd/internal/config"
)

// Spec is one protocol a protofile names.
type Spec struct {
	Name string
	// CreateCommand is the program and its arguments, separated by single spaces as
	// Mountebank splits them; "" when the entry has none (creating an imposter of it fails).
	CreateCommand string
}

// MaxProtofile is the largest protofile read (1 MiB).
const MaxProtofile = 1 << 20

// BuiltIn reports whether name is one of the protocols mockd serves itself; a protofile that
// names one replaces it, as in Mountebank.
func BuiltIn(name string) bool {
	switch name {
	case "http", "https", "tcp", "smtp":
		return true
	}
	return false
}

// ErrNotRead is Load's error for a path that is not a regular file of at most MaxProtofile
// bytes (a FIFO or a device, which could block the start, is not opened).
var ErrNotRead = errors.New("not read (not a regular file of at most 1 MiB)")

// ErrInvalid is Load's error for a file that is not a JSON object (Mountebank: "contains
// invalid JSON -- no custom protocols loaded").
var ErrInvalid = errors.New("contains invalid JSON -- no custom protocols loaded")

// Load reads the protocols a protofile names, in its order. A missing file names none and is
// no error, as in Mountebank.
func Load(path string) ([]Spec, error) {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() || info.Size() > MaxProtofile {
		return nil, ErrNotRead
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxProtofile+1)) // it may have grown since
	if err != nil {
		return nil, err
	}
	if len(data) > MaxProtofile {
		return nil, ErrNotRead
	}
	return Parse(data)
}

// Parse reads the protocols of a protofile's text.
func Parse(data []byte) ([]Spec, error) {
	v, err := config.ParseJSON(data)
	if err != nil {
		return nil, ErrInvalid
	}
	obj, ok := v.(*config.Object)
	if !ok || obj == nil {
		return nil, ErrInvalid
	}
	specs := make([]Spec, 0, len(obj.Members))
	seen := map[string]int{}
	for _, m := range obj.Members {
		s := Spec{Name: m.Key}
		if o := config.AsObject(m.Value); o != nil {
			if c, ok := o.Get("createCommand"); ok {
				if str, ok := c.(string); ok {
					s.CreateCommand = str
				}
			}
		}
		if i, dup := seen[m.Key]; dup { // JSON.parse keeps the last of a repeated key
			specs[i] = s
			continue
		}
		seen[m.Key] = len(specs)
		specs = append(specs, s)
	}
	return specs, nil
}

// Describe says in one line what a loaded protofile names, as Mountebank logs it.
func Describe(s Spec) string {
	if BuiltIn(s.Name) {
		return fmt.Sprintf("Using custom %s implementation instead of the built-in one", s.Name)
	}
	return "Loaded custom protocol " + s.Name
}

// splitCommand splits a createCommand as Mountebank does (createCommand.split(' ')): on every
// single space, so two spaces make an empty argument.
func splitCommand(command string) (name string, args []string) {
	parts := strings.Split(command, " ")
	return parts[0], parts[1:]
}
