// A Node.js client of colink's exemgr (mysql2), run by TestOtherClients as
// node mysql2.js HOST PORT. It prints what it reads, one line a row, for the test to
// compare with go-sql-driver's answers.
const mysql = require('mysql2/promise');

function print(rows) {
  for (const r of rows) console.log(r.map((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : String(v))).join('|'));
}

(async () => {
  const c = await mysql.createConnection({
    host: process.argv[2], port: Number(process.argv[3]), user: 'root', database: 'tpch',
    rowsAsArray: true, dateStrings: true, decimalNumbers: false, supportBigNumbers: true, bigNumberStrings: true,
  });
  console.log('# text');
  print((await c.query('select n_nationkey, n_name, n_regionkey from nation where n_regionkey = 2 order by 1'))[0]);
  console.log('# prepared');
  const q = 'select n_name, n_regionkey from nation where n_nationkey between ? and ? order by n_nationkey';
  print((await c.execute(q, [3, 5]))[0]);
  print((await c.execute(q, [24, 30]))[0]);
  console.log('# types');
  print((await c.execute('select max(o_orderdate), sum(o_totalprice), count(*) from orders where o_orderkey < ? and o_orderdate >= ?', [100, '1990-01-01']))[0]);
  console.log('# error');
  try {
    await c.query('select * from nosuch');
    console.log('no error');
  } catch (e) {
    console.log(e.errno + ' ' + e.sqlState + ' ' + (e.message.includes('nosuch') ? 'names the table' : e.message));
  }
  await c.end();
})().catch((e) => { console.error(e); process.exit(1); });
