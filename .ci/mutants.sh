#!/usr/bin/env bash
# The semantic mutants: small, meaningful wrong changes to the code that guards against losing events — the twin's
# account and alarms, the lifecycle rule, readiness's window, --all-contexts' exit code, the tables' scrolling,
# completion's filter — each applied alone, then the tests that should notice run. A mutant the tests do not
# notice LIVED: a test is missing. Run it before changing those parts, and after:
#
#   .ci/mutants.sh            every mutant (about 15 minutes on two cores; not part of CI's run)
#   .ci/mutants.sh readiness  only the mutants whose name holds "readiness"
#   .ci/mutants.sh --check    only check that every mutant still applies to the code (seconds)
#
# Each mutant is a literal text replacement that must match exactly once (a mutant that no longer applies says
# so: update it with the code). The file is put back after each, and on any exit. The tmux and shell tests need
# tmux, bash-completion, zsh and fish (./test.sh installs them); without them those tests skip, and their mutants
# would wrongly live, so the script refuses to run them. Exit 0 when every mutant was killed.
set -uo pipefail
cd "$(dirname "$0")/.."

filter=${1:-}
check_only=
if [ "$filter" = --check ]; then check_only=1 filter=; fi
killed=0 lived=0 broken=0
lived_names=()
backup=$(mktemp)
current=""
restore() { if [ -n "$current" ]; then cp "$backup" "$current"; current=""; fi; }
trap 'restore; rm -f "$backup"' EXIT
trap 'restore; exit 130' INT TERM

have_terminal() { command -v tmux >/dev/null && command -v zsh >/dev/null && command -v fish >/dev/null &&
	[ -f /usr/share/bash-completion/bash_completion ]; }

# mutant NAME FILE FROM TO PACKAGE TESTS [terminal]
mutant() {
	local name=$1 file=$2 from=$3 to=$4 pkg=$5 tests=$6 needs=${7:-}
	[[ -n $filter && $name != *"$filter"* ]] && return
	if [[ -z $check_only && $needs == terminal ]] && ! have_terminal; then
		echo "SKIPPED  $name (needs tmux, bash-completion, zsh and fish)"
		return
	fi
	local body rest
	body=$(cat "$file"; printf x) && body=${body%x}
	rest=${body#*"$from"}
	if [[ $rest == "$body" || $rest == *"$from"* ]]; then
		echo "BROKEN   $name: the text to mutate is not in $file exactly once (update the mutant with the code)"
		broken=$((broken + 1))
		return
	fi
	if [ -n "$check_only" ]; then
		echo "applies  $name"
		return
	fi
	cp "$file" "$backup"
	current=$file
	printf '%s' "${body/"$from"/"$to"}" >"$file"
	local log start=$SECONDS
	log=$(go test -count=1 -timeout 10m -run "$tests" "$pkg" 2>&1)
	local code=$?
	restore
	if [ $code -eq 0 ]; then
		echo "LIVED    $name ($pkg -run '$tests', $((SECONDS - start))s)"
		lived=$((lived + 1))
		lived_names+=("$name")
	elif grep -q -e '^FAIL' -e '^--- FAIL' -e 'panic:' <<<"$log" && ! grep -q -e 'build failed' -e '\[setup failed\]' <<<"$log"; then
		echo "killed   $name by $(grep -o -e '--- FAIL: [^ ]*' <<<"$log" | head -3 | sed 's/--- FAIL: //' | paste -sd, -) ($((SECONDS - start))s)"
		killed=$((killed + 1))
	else
		echo "BROKEN   $name: the mutant does not build"
		echo "$log" | head -20
		broken=$((broken + 1))
	fi
}

# ── the twin's account and alarms (internal/twin/alarms_test.go) ──
mutant account-stops-checking-its-sum internal/twin/account.go \
	'return len(a.Nowhere) == 0 && a.Published == a.Delivered+a.OnTheirWay+a.InBlobs+a.Lost' \
	'return len(a.Nowhere) == 0' \
	./internal/twin TestTheAccountChecksItsSum
mutant account-counts-nowhere-as-in-blobs internal/twin/account.go \
	$'\t\tdefault:\n\t\t\ta.Nowhere = append(a.Nowhere, id)' \
	$'\t\tdefault:\n\t\t\ta.InBlobs++' \
	./internal/twin TestALostEventIsNamed
mutant violations-never-recorded internal/twin/replay.go \
	'tw.st.Violations = append(tw.st.Violations, tw.st.Now.Format(time.RFC3339)+": "+fmt.Sprintf(format, args...))' \
	'_ = fmt.Sprintf(format, args...)' \
	./internal/twin 'IsAViolation'
mutant replay-handles-its-own-copies internal/estate/estate.go \
	$'\tif !rules.IsRoot(name) {\n\t\th.Ignored = true' \
	$'\tif name == "" {\n\t\th.Ignored = true' \
	./internal/twin TestASelfRetriggerIsAViolation
mutant trigger-filter-lets-copies-through replay/rules/pane.go \
	'return !hasPrefixFold(name, ArchivedPrefix) && !hasPrefixFold(name, QuarantinePrefix)' \
	'return name != ""' \
	./internal/twin TestTheFilterKeepsCopiesFromTheTrigger
mutant cap-alarm-one-late internal/twin/replay.go \
	'a.AtLeast(tw.cfg.MaxReplays + 1)' 'a.AtLeast(tw.cfg.MaxReplays + 2)' \
	./internal/twin TestARepublishPastTheCapIsAViolation
mutant cap-alarm-one-early internal/twin/replay.go \
	'a.AtLeast(tw.cfg.MaxReplays + 1)' 'a.AtLeast(tw.cfg.MaxReplays)' \
	./internal/twin TestARepublishPastTheCapIsAViolation
mutant copy-check-skipped internal/twin/replay.go \
	'if _, err := tw.dir.Stat(ctx, copyName); err != nil {' \
	'if _, err := tw.dir.Stat(ctx, copyName); err != nil && copyName == "" {' \
	./internal/twin TestAnOriginalDeletedBeforeItsCopyIsAViolation
mutant lifecycle-a-day-late replay/rules/config.go \
	'return lastModified.Add(c.Retention) }' 'return lastModified.Add(c.Retention + 24*time.Hour) }' \
	./internal/twin TestTheLifecycleDeletesAtExactlyTheRetention
mutant lifecycle-a-second-early replay/rules/config.go \
	'return lastModified.Add(c.Retention) }' 'return lastModified.Add(c.Retention - time.Second) }' \
	./internal/twin TestTheLifecycleDeletesAtExactlyTheRetention
mutant twin-draws-from-the-wall-clock internal/twin/twin.go \
	'fmt.Fprintf(h, "%d/%d", tw.st.Seed, tw.st.Draws)' 'fmt.Fprintf(h, "%d/%d/%d", tw.st.Seed, tw.st.Draws, time.Now().UnixNano()%2)' \
	./internal/twin TestTheTwinIsDeterministicByContent
mutant twin-status-exits-0-on-a-loss cmd/deadletter/twin.go \
	'case settled && !acct.Balanced():' 'case false && !acct.Balanced():' \
	./cmd/deadletter TestTwinStatusExitsNonZeroOnALoss

# ── readiness (replay/rules/readiness_test.go) ──
mutant readiness-window-doubled replay/rules/readiness.go \
	'{ return now.Sub(at) < b.ttl }' '{ return now.Sub(at) < 2*b.ttl }' \
	./replay/rules TestReadiness
mutant readiness-window-inclusive replay/rules/readiness.go \
	'{ return now.Sub(at) < b.ttl }' '{ return now.Sub(at) <= b.ttl }' \
	./replay/rules TestReadiness
mutant readiness-drained-by-last-modified replay/rules/readiness.go \
	$'case bi.LastModified.After(end):\n\t\treturn end, true' \
	$'case bi.LastModified.After(end):\n\t\treturn bi.LastModified, true' \
	./replay/rules TestReadiness
mutant readiness-counts-restored replay/rules/readiness.go \
	'if marks.Restored() {' 'if marks.Restored() && bi.Size < 0 {' \
	./replay/rules TestReadiness

# ── context precedence (cmd/deadletter/precedence_test.go): SPEC §5's order ──
mutant deadletter-context-beats-the-flag cmd/deadletter/config.go \
	'if f := flags.Lookup("context"); f == nil || !f.Changed {' 'if f := flags.Lookup("context"); f == nil || !f.Changed || os.Getenv("DEADLETTER_CONTEXT") != "" {' \
	./cmd/deadletter TestPrecedenceEveryPair
mutant env-container-leaves-the-current-context cmd/deadletter/config.go \
	'	if src == fromCurrent {' '	if src == fromFlag {' \
	./cmd/deadletter TestPrecedenceEveryPair
mutant context-value-beats-a-typed-flag cmd/deadletter/config.go \
	'		if f == nil || f.Changed {' '		if f == nil {' \
	./cmd/deadletter TestPrecedenceEveryPair

# ── --all-contexts (cmd/deadletter/allcontexts_test.go) ──
mutant all-contexts-takes-the-last-non-ok cmd/deadletter/contexts.go \
	$'case c == exitError || code == exitError:\n\t\t\tcode = exitError\n\t\tcase c != exitOK && code == exitOK:' \
	$'case c != exitOK:' \
	./cmd/deadletter 'TestWorstIsTheWorstInEveryPosition|TestCheckAllContextsTakesTheWorstInEveryPosition'
mutant all-contexts-takes-the-first-non-ok cmd/deadletter/contexts.go \
	'case c == exitError || code == exitError:' 'case code == exitError:' \
	./cmd/deadletter 'TestWorstIsTheWorstInEveryPosition|TestCheckAllContextsTakesTheWorstInEveryPosition'

# ── the tables' scrolling (tui/scroll_test.go; in tmux, cmd/deadletter/scroll_tmux_test.go) ──
mutant table-cursor-one-row-off-screen tui/table.go \
	'if cursor >= offset+height {' 'if cursor > offset+height {' \
	./tui Scrolls
mutant table-scrolls-one-short tui/table.go \
	'offset = cursor - height + 1' 'offset = cursor - height' \
	./tui Scrolls
mutant table-cursor-off-screen-in-tmux tui/table.go \
	'if cursor >= offset+height {' 'if cursor > offset+height {' \
	./cmd/deadletter TestTablesScrollInTmux terminal
mutant results-cursor-off-screen tui/run.go \
	'top := max(0, min(r.cursor-rows/2, len(lines)-rows))' 'top := max(0, min(r.cursor-rows, len(lines)-rows))' \
	./tui TestTheResultsScrollWithTheirCursor

# ── completion (cmd/deadletter/completion_test.go) ──
mutant completion-offers-names-with-escapes cmd/deadletter/completion.go \
	'case textfmt.Printable(b.Name) != b.Name || strings.ContainsAny(b.Name, "\t\n"):' \
	'case strings.ContainsAny(b.Name, "\t\n"):' \
	./cmd/deadletter 'TestCompletionRunsNothing' terminal
mutant completion-bash-unescaped cmd/deadletter/completion.go \
	'read -ra COMPREPLY -d '"''"' < <(printf "%q\n" "${COMPREPLY[@]}")' \
	'read -ra COMPREPLY -d '"''"' < <(printf "%s\n" "${COMPREPLY[@]}")' \
	./cmd/deadletter 'TestCompletionRunsNothing/bash' terminal

# ── an event's journey (replay/rules/journey_test.go; the twin's ground truth in cmd/deadletter/trace_test.go) ──
mutant journey-archived-read-last replay/rules/journey.go \
	'		if d := strings.Compare(a.Blob, b.Blob); d != 0 {' '		if d := strings.Compare(b.Blob, a.Blob); d != 0 {' \
	./replay/rules 'TestJourneyQuarantineCopyWins'
mutant journey-no-delay-after-ttl replay/rules/journey.go \
	'j.Until = last.At.Add(c.TTL + DeadLetterDelay)' 'j.Until = last.At.Add(c.TTL)' \
	./replay/rules 'TestJourneyDeliveringThenPresumed'
mutant journey-restored-source-forgotten replay/rules/journey.go \
	'		if !ok {
			k, byBlob[p.From] = len(ps), len(ps)' \
	'		if !ok {
			continue
			k, byBlob[p.From] = len(ps), len(ps)' \
	./replay/rules 'TestJourneyRestoredAndRepaired'
mutant quarantine-attempt-reads-zero replay/rules/journey.go \
	'		return Reached{Attempt: Attempt(c.MaxReplays), AtLeast: true, Reset: true}' \
	'		return Reached{Attempt: 0, Reset: true}' \
	./replay/rules 'TestReachedInAQuarantineCopy'

# ── paced and canary drains (replay/pace_test.go, internal/session/pace_test.go, cmd/deadletter/canary_test.go) ──
mutant pace-ignored replay/drain.go \
	'		r.pace = rate.NewLimiter(rate.Limit(o.Rate), 1)' '		r.pace = rate.NewLimiter(rate.Inf, 1)' \
	./replay 'TestAPacedDrainKeepsItsRate'
mutant wave-check-ignored replay/drain.go \
	'				stopped[strings.ToUpper(sub)] = why' '				_, _ = sub, why' \
	./replay 'TestAWaveStopsASubscriptionWhoseHandlerFailsAgain'
mutant relapse-before-the-drain-counts internal/session/actions.go \
	'if h.Verdict == rules.HandlerFailing && !h.LastFailure.Before(since) {' 'if h.Verdict == rules.HandlerFailing && false {' \
	./internal/session 'TestAPacedDrainStopsARelapse'
mutant canary-failing-goes-on replay/rules/canary.go \
	'func (w CanaryWord) Going() bool { return w == CanaryDelivered || w == CanaryNotTried }' \
	'func (w CanaryWord) Going() bool { return w != CanaryWaiting }' \
	./cmd/deadletter 'TestCanaryDrainLeavesAFailingSubscription'

# ── the app-start drain (replay/rules/appstart_test.go, internal/twin/appstart_test.go, cmd/deadletter) ──
mutant start-takes-young replay/rules/appstart.go \
	'	return it.Refused == "" && c.Classify(it.Name, now.Sub(it.LastModified)) == PaneStranded' \
	'	return it.Refused == "" && c.Classify(it.Name, now.Sub(it.LastModified)+time.Minute) == PaneStranded' \
	./replay/rules 'TestAWorkerStartTakesWhatTheDesignSays'
mutant start-missed-boundary replay/rules/appstart.go \
	'	if a.Last.Sub(it.LastModified) < c.TTL {' '	if a.Last.Sub(it.LastModified) <= c.TTL {' \
	./replay/rules 'TestTheLastStartMissedWhatItShouldHaveTaken'
mutant start-missed-handled replay/rules/appstart.go \
	'	if h, _ := handled(it); h || Untriggerable(it.Name) || it.Summary != nil && it.Summary.CrashDepth > 0 {' \
	'	if Untriggerable(it.Name) || it.Summary != nil && it.Summary.CrashDepth > 0 {' \
	./replay/rules 'TestTheLastStartMissedWhatItShouldHaveTaken'
mutant repeats-young-handled replay/rules/check.go \
	'		if k.cfg.AppStartTakes(it, now) {
			k.of(FindingAppStartRepeats).add(it, a, k.o.Names, false)' \
	'		if true {
			k.of(FindingAppStartRepeats).add(it, a, k.o.Names, false)' \
	./replay/rules 'TestAWorkerStartTakesWhatTheDesignSays'
mutant reupload-unconditional internal/twin/appstart.go \
	'	_, err = tw.c.Write(ctx, bi.Name, b.Body, store.WriteOptions{IfMatch: bi.ETag, ContentType: bi.ContentType})' \
	'	_, err = tw.c.Write(ctx, bi.Name, b.Body, store.WriteOptions{ContentType: bi.ContentType})' \
	./internal/twin 'TestWorkersStartingAtOnceReuploadEachBlobOnce'
mutant start-never-runs internal/twin/twin.go \
	'		return at, func(ctx context.Context) error { return tw.appStart(ctx, start) }' \
	'		return at, func(ctx context.Context) error { tw.st.NextStart++; return nil }' \
	./cmd/deadletter 'TestTheAppsStartDrainsWhatStrandedDuringItsStop'
mutant start-forgets-handled internal/twin/replay.go \
	'		tw.st.Totals.RepublishedTwice += h.Published' '		tw.st.Totals.RepublishedTwice += 0' \
	./cmd/deadletter 'TestTheAppsStartDrainsWhatStrandedDuringItsStop'
mutant ttl-at-its-end internal/twin/twin.go \
	'		p.Expire = !next.Before(p.First.Add(tw.cfg.TTL))
		p.Due = next' \
	'		p.Expire = !next.Before(p.First.Add(tw.cfg.TTL))
		if p.Expire {
			next = p.First.Add(tw.cfg.TTL)
		}
		p.Due = next' \
	./cmd/deadletter 'TestTwinWitnessSeesTheReplayDropping'
mutant activity-log-any-status internal/azmonitor/azmonitor.go \
	'	if e.Status == nil || e.Status.Value == nil || !strings.EqualFold(*e.Status.Value, "Succeeded") {' \
	'	if false {' \
	./internal/azmonitor 'TestTheLastStartComesFromTheActivityLog'
mutant scale-out-in-the-log internal/twin/appstart.go \
	'		if r.Kind != AppScaledOut {' '		if true {' \
	./internal/twin 'TestWorkersStartingAtOnceReuploadEachBlobOnce'
mutant probation-never internal/twin/probation.go \
	'	if pr.Fails >= probationAfter {' '	if false {' \
	./internal/twin 'TestProbationComesAfterTenFailuresInARow'
mutant probation-tries-anyway internal/twin/probation.go \
	'	if tw.st.Now.Before(tw.st.Probation[p.Sub].Until) {' '	if false {' \
	./internal/twin 'TestProbationSkipsAttemptsAndDropsWhatRunsOutMeanwhile'

# ── issue 53: the windows between a check and a write, the boundaries (replay/checkthenact_test.go, …) ──
mutant repair-retire-unconditional replay/repair.go \
	'	switch err := deleteHeld(wctx, c, orig.Name, orig.ETag, leaseID); {' \
	'	switch err := deleteHeld(wctx, c, orig.Name, "", leaseID); {' \
	./replay 'TestARepairLeavesAnOriginalRewrittenDuringItsWrite'
mutant restore-forgets-requarantined replay/restore.go \
	'	for _, n := range [...]string{target, a, q} {' '	for _, n := range []string{target, a, q}[:2] {' \
	./replay 'TestARestoreRetriedAfterTheReplayRequarantinedItsCopyWritesNothing'
mutant repair-case-blind replay/rules/repair.go \
	'	if rp.Original != nil && bytes.Equal(rp.Body, rp.Original.Body) {' \
	'	if rp.Original != nil && bytes.EqualFold(rp.Body, rp.Original.Body) {' \
	./replay 'TestRepairRefusals'
mutant canary-own-minute internal/session/canary.go \
	'		case h.Verdict == rules.HandlerFailing && h.LastFailure.After(from):' \
	'		case h.Verdict == rules.HandlerFailing && !h.LastFailure.Before(from):' \
	./internal/session 'TestACanaryIsNotFailedByItsOwnMinutesEarlierFailure'

mutant twin-from-owes-at-the-ttl internal/twin/from.go \
	'		if rules.Triggers(name) && now.Sub(bi.LastModified) < tw.cfg.TTL {' \
	'		if rules.Triggers(name) && now.Sub(bi.LastModified) <= tw.cfg.TTL {' \
	./internal/twin 'TestATwinOwesNothingForABlobExactlyATTLOld'
mutant twin-from-into-a-blob internal/twin/from.go \
	'		} else if len(l.Blobs) > 0 {' '		} else if len(l.Blobs) > 1 {' \
	./internal/twin 'TestAStartFromRefusesABlobAlreadyThereAndAHeldLock'
mutant known-rewrite-keeps-old-expiry internal/twin/known.go \
	'		e.etag, e.lm = etag, lm' '		e.etag = etag' \
	./internal/twin 'TestAKnownBlobRewrittenExpiresByItsNewTime'
mutant record-id-any internal/record/record.go \
	'	case l.ID == "" || len(l.ID) > 64 || !isHex(l.ID):' '	case l.ID == "":' \
	./internal/record 'TestAHostileLineIsSkippedAndNamed'
mutant record-always-shared internal/record/record.go \
	'				shared[l.ID] = shared[l.ID] || si > 0' '				shared[l.ID] = true' \
	./internal/record 'TestARecordIsSharedOnlyWhenTheSharedPlaceHoldsIt'
mutant record-outcome-cancelled internal/record/record.go \
	'	warned, _, err := a.r.writeAll(context.WithoutCancel(ctx), l)' '	warned, _, err := a.r.writeAll(ctx, l)' \
	./internal/record 'TestTheOutcomeReachesTheSharedRecordAfterCtrlC'
mutant log-since-ignored cmd/deadletter/log.go \
	'		if o.since > 0 && r.Intent.Wall.Before(time.Now().Add(-o.since)) {' '		if false {' \
	./cmd/deadletter 'TestLogSinceLocalOnlyAndAnIntentGone'
mutant resubmit-subscription-unchecked cmd/deadletter/resubmit.go \
	'o.subscription != "" && !strings.EqualFold(sub, o.subscription) {' 'o.subscription != "" && !strings.EqualFold(sub, sub) {' \
	./cmd/deadletter 'TestResubmit$'
mutant ack-unconditional replay/ack.go \
	'		err := tg.SetTags(wctx, bi.Name, tags, bi.ETag)' '		err := tg.SetTags(wctx, bi.Name, tags, "")' \
	./replay 'TestAnAckWritesItsTagsOnTheETagShown'
mutant ack-condition-off-the-wire store/azureblob/tags.go \
	'	if ifMatch != "" {
		opts = &blob.SetTagsOptions' '	if false {
		opts = &blob.SetTagsOptions' \
	./store/azureblob 'TestSetTagsSendsItsConditionOnTheWire'

mutant export-compares-lengths replay/export.go \
	'	return bytes.Equal(got.Body, want.Body) && got.ContentType == ct' \
	'	return bytes.Equal(got.Body[:0], want.Body[:0]) && len(got.Body) == len(want.Body) && got.ContentType == ct' \
	./cmd/deadletter 'TestExportAfterACrashComparesWhatItFinds'

mutant hook-allows-a-credential-named internal/hook/hook.go \
	'			keep = keep || k == n && !isCredential(k)' '			keep = keep || k == n' \
	./internal/hook 'TestEachGuardKeepsCredentialsFromAHookAlone'
mutant hook-scrub-forgets-names internal/hook/hook.go \
	'			if strings.EqualFold(k, n) {
				continue next' '			if false && strings.EqualFold(k, n) {
				continue next' \
	./internal/hook 'TestEachGuardKeepsCredentialsFromAHookAlone'

# Round 5, session 6: a streamed report, an action recorded in parts, the urgency order.
mutant readiness-streamed-keeps-the-first-clock replay/rules/readiness.go \
	'			if b.inWindow(now, time.Unix(0, at)) {' '			if at != 0 {' \
	./replay/rules 'TestStreamedReadinessAndTimelineEndAtTheLatestClock'
mutant picture-window-at-the-first-page replay/rules/picture.go \
	'func (pb *pictureBuilder) now(now time.Time) {
	if now.After(pb.p.Now) {' 'func (pb *pictureBuilder) now(now time.Time) {
	if pb.p.Now.IsZero() {' \
	./replay/rules 'TestStreamedReadinessAndTimelineEndAtTheLatestClock'
mutant record-parts-join-a-forgery internal/record/record.go \
	'		if p.Parts == first.Parts && p.Action == first.Action && p.Who == first.Who && p.Estate == first.Estate {' \
	'		if p.Parts == first.Parts {' \
	./internal/record 'TestAForgedPartAddsNothing'
mutant record-parts-unsplit internal/record/record.go \
	'	parts, err := split(l)' '	parts, err := []Line{l}, error(nil)' \
	./internal/record 'TestAnActionOverManyBlobsIsWrittenInParts'
mutant record-parts-missing-uncounted internal/record/record.go \
	'	return l, first.Parts - len(parts)' '	return l, 0' \
	./internal/record 'TestAnActionOverManyBlobsIsWrittenInParts'
mutant urgency-by-age internal/present/columns.go \
	'		case !a.LastModified.Equal(b.LastModified):' '		case a.Age != b.Age:
			return int(b.Age - a.Age)
		case !a.LastModified.Equal(b.LastModified):' \
	./internal/present 'TestSortByUrgency'

# One voice (issue 51), session 6: advice by the one verdict, a blob stranded again, cuts said, the record's filter.
mutant advice-stranded-again-forgotten internal/present/advice.go \
	'	case s.Pane == rules.PaneStranded && s.Drains > 0:' '	case false && s.Drains > 0:' \
	./internal/present 'TestAStrandedAgainBlobSaysItWasDrained'
mutant advice-warns-by-the-container-alone internal/present/advice.go \
	'	verdict, by := rules.HandlerNow(r, s.Handler)' '	verdict, by := rules.HandlerNow(r, rules.HandlerUnknown)' \
	./internal/present 'TestTheDrainAdviceWarnsByTheOneVerdict'
mutant fit-cuts-silently tui/layout.go \
	'			lines[i] = textfmt.Pad(textfmt.Truncate(l, w, "…"), w)' '			lines[i] = textfmt.Pad(textfmt.Truncate(l, w, ""), w)' \
	./tui 'TestFitCutsWithAnEllipsis'
mutant dashboard-record-forgets-the-filter tui/run.go \
	'			via += " · filter " + strconv.Quote(f)' '			via += "" + strconv.Quote("")[:0]' \
	./tui 'TestADashboardDrainRecordsItsFilter'

# Round 5, session 7: a watch stopped as its failing pass ran; a hook's reap beside deadletter's other children.
mutant watch-stop-during-a-failing-pass-is-interrupted cmd/deadletter/watch.go \
	'		if ctx.Err() != nil && errors.Is(err, context.Canceled) {' '		if ctx.Err() != nil && err != nil {' \
	./cmd/deadletter 'TestAWatchStoppedWhileItsContainerIsGoneIsNotInterrupted'
mutant hook-reap-takes-every-child internal/hook/hook_linux.go \
	'		if pp == self && pid != g.pgid && pg != own && !g.another(pg, env) {' '		if pp == self && pid != g.pgid && (pg != own || !g.another(pg, env) || true) {' \
	./internal/hook 'TestAHooksReapSpares'
mutant look-cut-short-forgets-the-stop cmd/deadletter/check.go \
	'the check is incomplete%s", why, first), ctx.Err()}' 'the check is incomplete%s", why, first), nil}' \
	./cmd/deadletter 'TestAWatchStoppedWhileReadingPayloadsExits2'
mutant detail-advice-without-the-witness tui/detail.go \
	'		state.SetStarts(cfg, &d.Item, w.App)
		state.SetHandler(*w, d.Parsed.Subscription)' '		state.SetStarts(cfg, &d.Item, w.App)' \
	./cmd/deadletter 'TestTheDashboardsDetailAdvisesAsShowDoesOnTheDemo' terminal

[ -n "$check_only" ] && { echo "broken $broken"; [ $broken -eq 0 ]; exit; }
echo "killed $killed, lived $lived, broken $broken"
if [ $lived -gt 0 ]; then
	printf 'lived: %s\n' "${lived_names[@]}"
fi
[ $lived -eq 0 ] && [ $broken -eq 0 ]
