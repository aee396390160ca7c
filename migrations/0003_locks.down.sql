DROP TABLE locks;
