-- A scheduled message keeps when it was scheduled for (`scheduled_for` of its MessagePosted) in the
-- REST message shape, so a client reading history can tell a late delivery; null for ordinary
-- messages. Messages delivered before this migration take it from their schedule (a delivered
-- scheduled message has the scheduled id, and its `send_at` no longer changes), so the read model
-- needs no replay.
ALTER TABLE chat_messages ADD COLUMN scheduled_for timestamptz;

UPDATE chat_messages m SET scheduled_for = s.send_at
  FROM chat_scheduled_messages s WHERE s.id = m.id AND s.status = 'delivered';
