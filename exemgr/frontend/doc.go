// Package frontend owns exemgr's MySQL front end: the listeners (TCP and unix socket), the
// packet layer of both phases (wire.go: bounded reads, sequence numbers, MySQL's read and
// write timeouts), the connection phase (handshake.go: the greeting, TLS from
// --tls-cert/--tls-key, and authentication against a users file by each account's plugin,
// caching_sha2_password by default or mysql_native_password), the command phase (COM_QUERY,
// COM_INIT_DB, COM_PING,
// COM_FIELD_LIST, COM_STATISTICS, COM_PROCESS_KILL, …), sessions and their registry (KILL,
// SHOW PROCESSLIST), and the encoding of Arrow record batches as MySQL text-protocol rows,
// streamed batch by batch so that a result's size never bounds the server's memory.
//
// Everything SQL is behind the Engine interface, which exemgr implements over sql/ and exec/:
// the front end answers only what belongs to the protocol and the session itself (system
// variables such as @@version_comment, SET of session variables, USE, KILL, SHOW PROCESSLIST,
// SHOW WARNINGS, transaction no-ops) and hands every other statement to the Engine.
//
// Errors reach the client with a MySQL error code and SQLSTATE: an error anywhere in its
// chain that implements MySQLError supplies them; anything else is 1105 (HY000).
package frontend
