package doctor

func checkOffloads(e *env) Check {
	return Check{Title: "checkOffloads", Status: Warn, Evidence: []string{"not built yet"}}
} // TODO(helper)
