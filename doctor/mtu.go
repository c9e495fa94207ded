package doctor

func checkMTU(e *env) Check {
	return Check{Title: "checkMTU", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
