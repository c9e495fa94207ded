package doctor

func checkSMT(e *env) Check {
	return Check{Title: "checkSMT", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
