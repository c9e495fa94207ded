package doctor

func checkGovernor(e *env) Check {
	return Check{Title: "checkGovernor", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
func checkIdle(e *env) Check {
	return Check{Title: "checkIdle", Status: Warn, Evidence: []string{"not built yet"}}
}                                            // TODO(helper)
func fixGovernor(e *env, j *journaler) error { return nil } // TODO(helper)

// cpuFacts fills the CPU model, microcode and governor of the planned CPUs.
func cpuFacts(e *env, f *Facts) {} // TODO(helper)
