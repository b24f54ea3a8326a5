-- The orchestration audit log now shows the releases an admin started on this service
-- (`update_applied`, from UpdateApplyRequested with service `orch`): the `audit_log` projection
-- replays the log from the start so the applies written before this migration are in it too (its
-- rows are derived; the log and its hash chain are untouched).
TRUNCATE audit_log;
DELETE FROM projection_checkpoints WHERE name = 'audit_log';
