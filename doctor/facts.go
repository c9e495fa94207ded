package doctor

// facts are the settings the checks read, for the fingerprint.
func facts(e *env) Facts {
	var f Facts
	cpuFacts(e, &f)
	nicFacts(e, &f)
	return f
}
