package doctor

func checkNUMA(e *env) Check {
	return Check{Title: "checkNUMA", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
