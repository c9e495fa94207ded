package doctor

func checkKernel(e *env) Check {
	return Check{Title: "checkKernel", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
