package choose

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestModuleLoader(t *testing.T) {
	ctx := context.Background()
	var ran [][]string
	run := func(out string, err error) Runner {
		return func(_ context.Context, name string, args ...string) ([]byte, error) {
			ran = append(ran, append([]string{name}, args...))
			return []byte(out), err
		}
	}
	root := func() int { return 0 }
	dir := t.TempDir()

	if err := (ModuleLoader{Run: run("", nil), Euid: func() int { return 1000 }, ProcDir: dir}).Load(ctx); !errors.Is(err, ErrNotRoot) || len(ran) != 0 {
		t.Errorf("not root: %v, ran %q", err, ran)
	}
	if err := (ModuleLoader{Run: run("", nil), Euid: root, ProcDir: dir}).Load(ctx); err != nil || !slices.Equal(ran[0], []string{"modprobe", "pktgen"}) {
		t.Errorf("root: %v, ran %q", err, ran)
	}
	exit := &exec.ExitError{}
	err := (ModuleLoader{Run: run("modprobe: FATAL: Module pktgen not found\n", exit), Euid: root, ProcDir: dir}).Load(ctx)
	if !errors.As(err, &exit) || !strings.HasSuffix(err.Error(), ": modprobe: FATAL: Module pktgen not found") {
		t.Errorf("modprobe fails: %v", err)
	}
	// Loaded, but the directory is missing (a network namespace other than
	// the first shows no pktgen).
	if err := (ModuleLoader{Run: run("", nil), Euid: root, ProcDir: dir + "/none"}).Load(ctx); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no proc dir after loading: %v", err)
	}
}
