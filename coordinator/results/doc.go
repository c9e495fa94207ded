// Package results is the result store: every run and campaign is one JSON
// document (schema versioned) in a results directory, with the spec,
// every trial and a fingerprint of every host, so that two qualifications
// can be compared years apart.
//
// # Store
//
// A Store is a directory (DefaultDir, ./linerate-results, unless told
// otherwise) holding one file <id>.json per document. Save writes a
// temporary file in the same directory, fsyncs it, renames it over the
// name and fsyncs the directory: readers see a whole document or none.
// Only a regular file is replaced (safefile.WriteFile): a device, fifo or
// directory in the file's place is refused and left alone.
// Load takes a full id or any unique prefix of one; List reads every
// document, oldest first. Nothing else is kept: copying, archiving or
// deleting results is done with files.
//
// # Schema
//
// The document's "schema" is "linerate.result/v1". Readers accept any
// v1.x (fields may be added within a major version; unknown fields are
// ignored) and refuse other major versions and other schemas with
// ErrSchema, before decoding anything else. All rates are packets (or
// bits) per second; ratios are fractions (0.001 = 0.1 %); times are
// RFC 3339 in UTC.
//
//	schema          "linerate.result/v1"
//	id              unique, sorts by time: 20261201T031500Z-3f9a1c (NewID);
//	                a run's document uses the run's id
//	kind            "run" (one `linerate run`) or "campaign"
//	name            the campaign's (or run's) name, if given
//	created         when it started
//	finished        when it ended
//	tool_version    the linerate that made it
//	status          "ok", "failed" or "partial" (as a run's status);
//	                a campaign also "running" or "interrupted" (below)
//	error           why it failed, naming the agent and phase
//	writer          the process that ran the campaign: pid, host, boot_id,
//	                started (its start time)
//	resumed         how many times `campaign resume` continued it
//	spec            the campaign or run spec as given (JSON), for the record
//	summary[]       one row per frame size:
//	  size              Ethernet frame bytes including FCS (RFC 2544), 0 for a mix
//	  label             the mix's name ("imix 7:4:1")
//	  throughput_pps    the RFC 2544 throughput (highest rate with loss ≤ goal),
//	                    summed over flows; for a run, what it received
//	  l1_bps            the same on the wire (frame + FCS + preamble + IFG)
//	  line_rate_pct     throughput_pps as % of LineRatePPS
//	  loss_ratio        loss of the trial that set the throughput
//	  ndr_pps, pdr_pps  no-drop and partial-drop rates (MLRsearch), when searched
//	  pdr_goal          the loss ratio the PDR allows
//	  trials            trials run for this size
//	  throughput_trial  n of the trial that set the throughput (0: none)
//	  generator_limited the senders could not offer more: a lower bound
//	  note              anything the search wants said
//	  back_to_back      RFC 2544's back-to-back frames (26.4), when tested:
//	                    each trial's longest burst per flow with no loss
//	                    (frames), their mean, range and mean burst's time
//	                    at rate_pps, lower_bound when the longest searched
//	                    passed (BackToBack)
//	trials[]        every trial in the order run, valid or not:
//	  n, size           1-based order; frame bytes incl. FCS
//	  search, phase     rfc2544|ndr-pdr|none; max|binary|ceiling|min|initial|final|sweep|warmup|latency|back-to-back
//	  offered_pps       offered rate per flow
//	  burst             a back-to-back burst's frames per flow (duration_s: their time at offered_pps)
//	  duration_s        the send window (a campaign's: the trial duration asked for;
//	                    a run's: its flows' measured window)
//	  sent, received, lost, loss_ratio   over all flows
//	  achieved_pps      the senders' rate per flow: the mean over flows of each
//	                    flow's achieved_pps (AchievedPPS, the one derivation)
//	  generator_limited the senders stayed under offered_pps
//	  valid             counted by the search (not generator-limited, not failed)
//	  passed            loss ratio within the goal
//	  run_id, error     the run behind the trial, and its error
//	  flows[]           the run's reconciled flows (see `linerate run --json`)
//	hosts[]         one fingerprint per agent that took part:
//	  name, role        serf name; sender or receiver
//	  kernel, driver, firmware, nic    uname -r; driver; firmware version; PCI address and model
//	  iface, link_speed_mbps, numa_node
//	  irq_map[]         queue IRQ pins used: queue, irq, cpu, name, dir
//	  backend, method   the sender's packet generator; the receiver's counting method
//	  tool_version      the agent's linerate version
//	run             kind run: the whole `linerate run --json` result
//	lab             the lab's own truth (switch port counts), from `linerate lab`
//
// A run's document (FromRun) has one summary row and one trial derived
// from its result; documents stored without them get the same through
// Document.Rows and Document.AllTrials.
//
// # Campaigns in progress
//
// A campaign is saved when it starts and after every trial, with status
// "running" and its writer, so a coordinator killed at hour 2 of 3 keeps
// every trial it finished (the trial under way is lost: it is run again
// on resume). Stopped by Ctrl-C or SIGTERM, the campaign saves itself as
// "interrupted" before it exits. Killed outright (SIGKILL, a crash, a
// power cut) it cannot, and the file still says "running": Load and List
// then ask Processes whether the writer still runs, and present the
// document as "interrupted" when it does not — no process with that pid,
// one with that pid but another start time (a reused pid), or a boot id
// that is not this boot's. The file is not rewritten by reading it. A
// document written on another host (a shared directory) cannot be
// checked from here and stays "running" (the writer's host says where
// to look). An interrupted, failed or partial campaign can be continued
// with `linerate campaign resume ID` (package campaign, Runner.Resume).
//
// # Comparing
//
// Compare measures a document B against a reference A per frame size and
// flags a regression when B is worse by more than a threshold
// (DefaultThreshold, 2 %): throughput, NDR or PDR lower by more than that
// fraction of A's, or loss ratio higher by more than that in absolute
// terms. Fingerprint differences (kernel, driver, firmware, NIC, link
// speed, NUMA node, backend, method, IRQ map, tool version) are listed
// with it, because the usual cause of a regression is a host that
// changed.
package results
