DROP INDEX holds_expiry_unannounced;
ALTER TABLE holds DROP COLUMN expiry_announced_at;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_events;
DROP FUNCTION reservation_created_data;
DROP TABLE webhook_endpoints;
