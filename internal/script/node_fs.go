package script

import (
	"errors"
	"io/fs"
	"os"
	"sort"
	"syscall"

	"github.com/dop251/goja"
)

// fsNatives are the functions behind the prelude's require('fs'): synchronous file access, as
// Mountebank's scripts get from node. Scripts run only with --allowInjection, which is what
// allows them to read and write files anywhere the process may.
func (rt *runtime) fsNatives(native *goja.Object) {
	vm := rt.vm
	_ = native.Set("fsRead", func(path string) goja.ArrayBuffer {
		b, err := os.ReadFile(path)
		if err != nil {
			panic(rt.fsError(err, "open", path))
		}
		return vm.NewArrayBuffer(b)
	})
	_ = native.Set("fsWrite", func(path string, data goja.Value, appendTo bool) {
		b, _ := data.Export().([]byte)
		flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
		if appendTo {
			flag = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		}
		f, err := os.OpenFile(path, flag, 0o666)
		if err != nil {
			panic(rt.fsError(err, "open", path))
		}
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			panic(rt.fsError(err, "write", path))
		}
	})
	_ = native.Set("fsExists", func(path string) bool {
		_, err := os.Stat(path)
		return err == nil
	})
	_ = native.Set("fsReaddir", func(path string) []string {
		entries, err := os.ReadDir(path)
		if err != nil {
			panic(rt.fsError(err, "scandir", path))
		}
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		sort.Strings(names)
		return names
	})
	_ = native.Set("fsStat", func(path string) map[string]any {
		fi, err := os.Stat(path)
		if err != nil {
			panic(rt.fsError(err, "stat", path))
		}
		return map[string]any{
			"size": fi.Size(), "mtimeMs": float64(fi.ModTime().UnixNano()) / 1e6, "mode": int64(fi.Mode().Perm()),
			"isFile": fi.Mode().IsRegular(), "isDirectory": fi.IsDir(),
		}
	})
	_ = native.Set("fsUnlink", func(path string) {
		if err := os.Remove(path); err != nil {
			panic(rt.fsError(err, "unlink", path))
		}
	})
}

// fsError is node's error for a failed file system call: "ENOENT: no such file or directory,
// open 'x'" with errno, code, syscall and path.
func (rt *runtime) fsError(err error, call, path string) goja.Value {
	code, errno, text := "EIO", int(syscall.EIO), "i/o error"
	var e syscall.Errno
	if errors.As(err, &e) {
		errno, text = int(e), e.Error()
		if known, ok := fsErrnos[e]; ok {
			code, text = known[0], known[1]
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && (pe.Op == "read" || pe.Op == "write") {
		// The file opened and the call on it failed: node names neither path nor file.
		o := rt.newError(code + ": " + text + ", " + pe.Op)
		_ = o.Set("errno", -errno)
		_ = o.Set("code", code)
		_ = o.Set("syscall", pe.Op)
		return o
	}
	o := rt.newError(code + ": " + text + ", " + call + " '" + path + "'")
	_ = o.Set("errno", -errno)
	_ = o.Set("code", code)
	_ = o.Set("syscall", call)
	_ = o.Set("path", path)
	return o
}

// fsErrnos are libuv's names and messages of the errors file calls meet.
var fsErrnos = map[syscall.Errno][2]string{
	syscall.ENOENT:    {"ENOENT", "no such file or directory"},
	syscall.EACCES:    {"EACCES", "permission denied"},
	syscall.EISDIR:    {"EISDIR", "illegal operation on a directory"},
	syscall.ENOTDIR:   {"ENOTDIR", "not a directory"},
	syscall.EEXIST:    {"EEXIST", "file already exists"},
	syscall.EPERM:     {"EPERM", "operation not permitted"},
	syscall.ENOTEMPTY: {"ENOTEMPTY", "directory not empty"},
}
