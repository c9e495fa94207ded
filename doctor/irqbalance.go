package doctor

func checkIRQBalance(e *env) Check {
	return Check{Title: "checkIRQBalance", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
