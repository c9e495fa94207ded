package vm_test

import (
	"strings"
	"testing"

	"github.com/linerate/linerate/cmd/linerate/internal/vm"
	"github.com/linerate/linerate/cmd/linerate/internal/vmtest"
)

// The accelerator: $LINERATE_VM_ACCEL overrides, an unknown value is
// refused naming it, and unset it is KVM exactly when KVM boots the guest
// kernel here (an override of kvm then succeeds), else TCG.
func TestAccelFor(t *testing.T) {
	k := vmtest.SkipUnlessAvailable(t)
	t.Setenv(vm.AccelEnv, "tcg")
	if got, err := vm.AccelFor(k); got != vm.AccelTCG || err != nil {
		t.Errorf("%s=tcg: %q, %v", vm.AccelEnv, got, err)
	}
	t.Setenv(vm.AccelEnv, "hvf")
	if _, err := vm.AccelFor(k); err == nil || !strings.Contains(err.Error(), vm.AccelEnv) || !strings.Contains(err.Error(), `"hvf"`) {
		t.Errorf("%s=hvf: %v, want an error naming the variable and its value", vm.AccelEnv, err)
	}
	t.Setenv(vm.AccelEnv, "")
	auto, err := vm.AccelFor(k)
	if err != nil || (auto != vm.AccelKVM && auto != vm.AccelTCG) {
		t.Fatalf("unset: %q, %v", auto, err)
	}
	t.Setenv(vm.AccelEnv, "kvm")
	forced, err := vm.AccelFor(k)
	t.Logf("accelerator here: %s (with %s=kvm: %q, %v)", auto, vm.AccelEnv, forced, err)
	if (err == nil) != (auto == vm.AccelKVM) {
		t.Errorf("unset chose %s but %s=kvm answers %q, %v: the two must agree on whether KVM works", auto, vm.AccelEnv, forced, err)
	}
	if err != nil && !strings.Contains(err.Error(), "unset it") {
		t.Errorf("%s=kvm where KVM does not work: %v, want the way back to TCG named", vm.AccelEnv, err)
	}
}
