package team

// sharedSchema: what machines share. Each table's rows belong to one
// machine (machine_id, its role); a machine writes only its own (ownRows),
// every write is an idempotent upsert or insert keyed by machine and
// record, and each record carries its machine's signature.
//
// Sizes are bounded in the database too: a member's machine cannot make
// the lead's view read megabytes per row. JSON is kept as the text the
// machine signed (checked to be JSON), not as jsonb, which would rewrite
// it into a form the signature no longer covers.
func sharedSchema(r roles) []string {
	out := []string{
		`CREATE TABLE team_rows (
			machine_id text NOT NULL,
			row_id text NOT NULL,
			seq bigint NOT NULL,
			deleted boolean NOT NULL DEFAULT false,
			kind text NOT NULL,
			name text NOT NULL,
			provider text NOT NULL,
			account_ref text NOT NULL,
			environment text NOT NULL,
			owner text NOT NULL,
			backup_revoker text NOT NULL,
			state text NOT NULL,
			controlled boolean NOT NULL,
			review_by timestamptz,
			next_drill timestamptz,
			drill_every_days integer NOT NULL,
			drill_kind text NOT NULL,
			last_drill_at timestamptz,
			last_drill_passed boolean,
			row_json text NOT NULL CHECK (octet_length(row_json) <= 65536 AND row_json::jsonb IS NOT NULL),
			signature text NOT NULL,
			updated_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (machine_id, row_id))`,
		`CREATE INDEX team_rows_by_name ON team_rows (lower(name), machine_id, row_id)`,
		`CREATE TABLE team_drill_reports (
			machine_id text NOT NULL,
			drill_id text NOT NULL,
			row_id text NOT NULL,
			kind text NOT NULL,
			trigger text NOT NULL,
			passed boolean NOT NULL,
			started_at timestamptz NOT NULL,
			finished_at timestamptz NOT NULL,
			report_json text NOT NULL CHECK (octet_length(report_json) <= 262144 AND report_json::jsonb IS NOT NULL),
			signature text NOT NULL,
			received_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (machine_id, drill_id))`,
		`CREATE INDEX team_drill_reports_by_row ON team_drill_reports (machine_id, row_id, finished_at)`,
		`CREATE TABLE team_checkpoints (
			machine_id text NOT NULL,
			log_id text NOT NULL,
			size bigint NOT NULL CHECK (size >= 0),
			root text NOT NULL,
			verifier_key text NOT NULL,
			checkpoint text NOT NULL CHECK (octet_length(checkpoint) <= 16384),
			signature text NOT NULL,
			published_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (machine_id, log_id, size))`,
		// The witness's cosignatures of a machine's checkpoints, as the
		// machine got them back (backend/witness answers the machine; the
		// machine publishes what it got).
		`CREATE TABLE team_cosignatures (
			machine_id text NOT NULL,
			log_id text NOT NULL,
			size bigint NOT NULL,
			witness text NOT NULL,
			cosignature text NOT NULL CHECK (octet_length(cosignature) <= 4096),
			signature text NOT NULL,
			received_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (machine_id, log_id, size, witness))`,
	}
	out = append(out, ownRows(r, "team_rows", true)...)
	out = append(out, ownRows(r, "team_drill_reports", false)...)
	out = append(out, ownRows(r, "team_checkpoints", false)...)
	return append(out, ownRows(r, "team_cosignatures", false)...)
}

// requestSchema: the lead's revocation requests. Only a lead inserts one,
// and only the columns that say what to revoke and why (who asked and
// when are the database's to fill in: current_user and now()); a request
// names the connection it is about (row_connected_at: a reconnected
// authorization keeps its id, and is not what the lead asked about); the
// machine the request names reads it and answers it once (a pending
// request only), and only with its outcome. A trigger wakes the machine
// with a notification on its own channel, with no payload: the table is
// the truth, the notification only says to read it.
func requestSchema(r roles) []string {
	m, l := ident(r.member), ident(r.lead)
	answered := literal("yett_rq_answered_" + r.team)
	out := []string{
		`CREATE TABLE team_revocation_requests (
			id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			request_uid text NOT NULL UNIQUE,
			machine_id text NOT NULL REFERENCES team_machines (machine_id),
			row_id text NOT NULL,
			row_connected_at timestamptz NOT NULL,
			reason text NOT NULL CHECK (length(reason) <= 500),
			requested_by text NOT NULL DEFAULT current_user,
			requested_at timestamptz NOT NULL DEFAULT now(),
			request_signature text NOT NULL,
			status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'incomplete', 'failed', 'refused')),
			outcome_json text CHECK (outcome_json IS NULL OR (octet_length(outcome_json) <= 65536 AND outcome_json::jsonb IS NOT NULL)),
			answered_at timestamptz,
			answer_signature text)`,
		`CREATE INDEX team_requests_pending ON team_revocation_requests (machine_id, id) WHERE status = 'pending'`,
		`CREATE FUNCTION team_notify_request() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			PERFORM pg_notify('yett_rq_' || substr(encode(sha256(convert_to(NEW.machine_id, 'UTF8')), 'hex'), 1, 16), '');
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER team_request_notify AFTER INSERT ON team_revocation_requests
			FOR EACH ROW EXECUTE FUNCTION team_notify_request()`,
		`CREATE FUNCTION team_notify_answer() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			PERFORM pg_notify(` + answered + `, '');
			RETURN NULL;
		END $$`,
		`CREATE TRIGGER team_answer_notify AFTER UPDATE ON team_revocation_requests
			FOR EACH ROW EXECUTE FUNCTION team_notify_answer()`,
	}
	return append(append(out, secure("team_revocation_requests")...),
		`GRANT SELECT, UPDATE (status, outcome_json, answered_at, answer_signature) ON team_revocation_requests TO `+m,
		`GRANT SELECT, INSERT (request_uid, machine_id, row_id, row_connected_at, reason, request_signature) ON team_revocation_requests TO `+l,
		`CREATE POLICY own_requests ON team_revocation_requests FOR SELECT TO `+m+` USING (machine_id = current_user)`,
		`CREATE POLICY answer_request ON team_revocation_requests FOR UPDATE TO `+m+`
			USING (machine_id = current_user AND status = 'pending') WITH CHECK (machine_id = current_user)`,
		`CREATE POLICY lead_reads_requests ON team_revocation_requests FOR SELECT TO `+l+` USING (true)`,
		`CREATE POLICY lead_requests ON team_revocation_requests FOR INSERT TO `+l+` WITH CHECK (requested_by = current_user)`,
	)
}
