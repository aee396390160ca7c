DROP TABLE seat_fences;
