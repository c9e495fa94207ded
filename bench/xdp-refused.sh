# Sourced by the bench scripts that send with linerate's xdp backend on
# this host (generators.sh, veth-pair.sh). Some hosts refuse
# BPF_PROG_RUN's live-frame mode (BPF_F_TEST_XDP_LIVE_FRAMES, which the
# xdp backend sends with) with EPERM even to root: seen on 6.18.44-fc with
# the BPF LSM active and CAP_SYS_RESOURCE outside the capability bounding
# set. That is the environment's refusal, not linerate's failure: the
# scripts then leave xdp out and say so. Any other error of the xdp
# backend stays a failure.
#
# xdp_refused ERRFILE: true when ERRFILE (the stderr of a `linerate send
# --backend xdp`) holds that refusal; then sets XDP_REFUSAL to the one line
# the scripts print, with linerate's own error in it.
xdp_refused() {
	# linerate's words for it, older and current: "BPF_PROG_RUN needs …:
	# operation not permitted", "… BPF_PROG_RUN in live-frame mode to this
	# process (operation not permitted) …"
	grep -Eq 'BPF_PROG_RUN[^:]*(: |\()operation not permitted' "$1" || return 1
	XDP_REFUSAL="xdp: not run on this machine: the kernel refuses BPF_PROG_RUN's live-frame mode with EPERM, even to root ($(grep -E 'BPF_PROG_RUN' "$1" | tail -1))"
}
