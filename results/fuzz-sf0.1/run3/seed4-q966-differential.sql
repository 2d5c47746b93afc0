-- sqlfuzz finding: seed 4, query 966, differential oracle
-- what differs: row 1 column 1: 1992-01-04 against NULL
-- reduced in 13 checks from 30 to 13 nodes

-- the reduced query (colink, MySQL dialect):
select t4.l_receiptdate as a1 from customer as t1 join orders as t3 on (t1.c_custkey = t3.o_custkey) left join lineitem as t4 on (t3.o_orderkey = t4.l_orderkey) order by 1 limit 3;

-- the same in DuckDB's dialect:
-- select t4.l_receiptdate as a1 from customer as t1 join orders as t3 on (t1.c_custkey = t3.o_custkey) left join lineitem as t4 on (t3.o_orderkey = t4.l_orderkey) order by 1 nulls first limit 3;

-- colink:
--   1992-01-04
--   1992-01-05
--   1992-01-05
-- duckdb:
--   NULL
--   NULL
--   NULL

-- as generated:
-- select t4.l_receiptdate as a1 from customer as t1 left join nation as t2 on ((t1.c_nationkey = t2.n_nationkey) and (('AIR' between 'GERMANY' and 'Customer#000000001') and (t2.n_comment >= t2.n_name))) join orders as t3 on (t1.c_custkey = t3.o_custkey) left join lineitem as t4 on (t3.o_orderkey = t4.l_orderkey) order by 1 limit 3;
