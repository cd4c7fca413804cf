"""Work beside the stream: concurrent readers and independent OCC batch writers."""
