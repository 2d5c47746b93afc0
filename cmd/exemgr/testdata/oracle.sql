# Cases of TestMariaDBOracle (oracle_test.go): one SELECT per line, run in colink and in
# MariaDB over the same rows; "known TAG" marks the next case as a documented deviation.
# MariaDB holds all of region and nation, orders and lineitem with orderkey <= 7, customer
# with c_custkey <= 5: filter those three tables to them. Each constant case has a twin
# over column data, so that both constant folding and the kernels are checked.

# --- decimal division chains
select 1/3*3
select 1/3
select 1/3 = 0.3333
select 1/3 = 0.33333333
select 1/3 in (0.3333)
select 0 in (1/100000)
select 1/100000
select 2/3
select 1/7*7
select (1/3)*(1/3)
select 1/3/3
select 10/4
select 7 div 2, -7 div 2, 7 % 3, -7 % 3, 7 mod -3
select 1/0, 1 div 0, 1 % 0
select 1.5/0.7, 1.50/0.7, 100.00/3.000
select o_orderkey/3*3, o_orderkey/3 from orders where o_orderkey <= 7 order by o_orderkey
select o_orderkey*(1/3), 3*(1/3) from orders where o_orderkey <= 7 order by o_orderkey
select o_orderkey*(1/3)*3 from orders where o_orderkey <= 7 order by o_orderkey
select o_orderkey/3 = 0.3333 from orders where o_orderkey = 1
known inlist
select o_orderkey/3 in (0.3333, 0.6667) from orders where o_orderkey <= 3 order by o_orderkey
select o_orderkey/100000 in (0) from orders where o_orderkey = 1
select o_totalprice/7, o_totalprice/o_orderkey from orders where o_orderkey <= 7 order by o_orderkey
select o_totalprice/7*7 from orders where o_orderkey <= 7 order by o_orderkey
select o_totalprice*(1/7) from orders where o_orderkey <= 7 order by o_orderkey
select l_extendedprice*(1-l_discount)*(1+l_tax) from lineitem where l_orderkey = 1 order by l_linenumber
select l_extendedprice*(1-l_discount)/l_quantity from lineitem where l_orderkey = 1 order by l_linenumber
select l_quantity/0, l_quantity div 0, l_quantity % 0 from lineitem where l_orderkey = 1 and l_linenumber = 1
select o_orderkey div 2, -o_orderkey div 2, o_orderkey % 3, -o_orderkey % 3 from orders where o_orderkey <= 7 order by o_orderkey
select l_quantity div 7, l_quantity % 7, l_extendedprice % 10 from lineitem where l_orderkey = 1 order by l_linenumber
select sum(o_orderkey/3), sum(o_orderkey)/3 from orders where o_orderkey <= 7
select 1/3 + o_orderkey from orders where o_orderkey = 1
select o_orderkey + 1/3 = 1.3333 from orders where o_orderkey = 1

# --- rounding
select round(2.5), round(-2.5), round(3.5), round(2.45, 1), round(2.55, 1), round(-2.55, 1)
select round(1234.5678, -2), round(1/3, 2), round(2/3, 0), truncate(2.567, 2), truncate(-2.567, 1)
select round(2.5e0), round(3.5e0), round(-2.5e0), round(0.5e0)
select floor(-2.5), ceiling(-2.5), floor(2.5), ceil(2.5), abs(-2.5)
select round(l_extendedprice, 1), round(l_extendedprice, -2), truncate(l_extendedprice, 0) from lineitem where l_orderkey = 1 order by l_linenumber
select round(l_extendedprice/3, 2), floor(l_extendedprice/3), ceil(l_extendedprice/3) from lineitem where l_orderkey = 1 order by l_linenumber
select round(o_orderkey/2), floor(o_orderkey/2), ceil(-o_orderkey/2) from orders where o_orderkey <= 7 order by o_orderkey
select round(o_orderkey + 0.5), round(-o_orderkey - 0.5) from orders where o_orderkey <= 3 order by o_orderkey

# --- integer overflow
select 9223372036854775807 + 1
select 9223372036854775807 + 0
select -9223372036854775807 - 1
select -9223372036854775807 - 2
select 4294967296 * 4294967296
select 9223372036854775807 * 2
select 2147483647 + 1, -2147483648 - 1
select 922337203685477580 * 10
select o_orderkey + 9223372036854775806 from orders where o_orderkey = 1
select o_orderkey + 9223372036854775807 from orders where o_orderkey = 1
select o_orderkey * 4611686018427387904 from orders where o_orderkey = 2
select -o_orderkey - 9223372036854775807 from orders where o_orderkey = 2
select n_nationkey + 2147483647 from nation where n_nationkey = 1
select n_nationkey * 2147483647 * 2 from nation where n_nationkey = 2
select -9223372036854775808
select abs(-9223372036854775807)

# --- double arithmetic and overflow
select 1e308 * 10
select -1e308 * 10
select 1e308 + 1e308
select 1e308 / 1e-10
select 1.5e0 / 0
select 1e0 / 3, 2e0 / 3
select 0.1e0 + 0.2e0
select o_orderkey * 1e308 * 10 from orders where o_orderkey = 1
select o_orderkey / 3e0 from orders where o_orderkey <= 3 order by o_orderkey
select o_orderkey * 1.5e0, o_orderkey + 0.1e0 from orders where o_orderkey <= 3 order by o_orderkey
select sqrt(2), sqrt(-1), power(2, 10), power(2, 0.5), exp(1), ln(0), log10(1000)
select sqrt(0), ln(-1), log10(0), log10(-5), exp(0), pow(2, -2), pow(-2, 3), power(null, 2), sqrt(null), ln(1), sqrt('4')
select exp(1000)
select pow(0, -1)
select pow(-8, 0.5)
select sqrt(o_totalprice), ln(o_orderkey - 2), log10(o_orderkey * 10), exp(o_orderkey), pow(o_orderkey, 2), pow(2, o_orderkey - 4) from orders where o_orderkey <= 7 order by o_orderkey
select ln(o_totalprice), log10(o_totalprice), exp(o_totalprice / 100000), pow(o_totalprice, 0.37), pow(o_orderkey * 0.37, 1.7) from orders where o_orderkey <= 7 order by o_orderkey
select ln(3), log10(20), log10(40), exp(0.74), pow(2.59, 1.7), pow(1234.5678, 5), log10(0.2597)
select exp(172799.49 / 100000), ln(1 / 3), sqrt(2 / 3), pow(1 / 3, 2), sign(1 / 3 - 0.3333)
select log(10), log(2, 1024), log(10, 1000), log(1, 5), log(0, 5), log(-2, 5), log(2, 0), log(null, 2), log2(1024), log2(3), log2(0), log2(-1)
select log(o_totalprice), log(o_orderkey + 1, o_totalprice), log2(o_totalprice), log(o_orderkey - 1, 8) from orders where o_orderkey <= 7 order by o_orderkey
select exp(o_orderkey * 1000) from orders where o_orderkey <= 7 order by o_orderkey
select sign(o_orderkey - 3), sign(o_totalprice - 100000), sign(o_totalprice * 1e0 - 100000), mod(o_orderkey, 3), mod(o_totalprice, 7) from orders where o_orderkey <= 7 order by o_orderkey
select l_discount * 1e0, l_extendedprice + 0e0 from lineitem where l_orderkey = 1 order by l_linenumber
select 1e0 + 1, 1e0 + 1.5, 2e0 * 3

# --- CAST and CONVERT
select cast(1.5 as signed), cast(2.5 as signed), cast(-1.5 as signed), cast(-2.5 as signed)
select cast(1.999 as decimal(5,2)), cast(-1.995 as decimal(5,2)), cast(123.456 as decimal(4,1))
# MariaDB clamps to 999.9 and warns; colink fails (error 1292/1690) rather than change a value silently
known warnings
select cast(12345.6 as decimal(4,1))
select cast(1/3 as decimal(10,8))
select cast('12.5' as decimal(5,2)), cast('12.5' as signed)
select cast('1996-02-29' as date), cast('1997-02-29' as date)
select cast(1.5e0 as signed), cast(2.5e0 as signed), cast(-2.5e0 as signed)
select cast(5 as char), cast(1.50 as char), cast(date '2000-01-01' as char)
select convert(1.25, decimal(5,1)), convert('42', signed)
select cast(o_orderkey as decimal(10,2)), cast(o_totalprice as signed) from orders where o_orderkey <= 7 order by o_orderkey
known warnings
select cast(o_totalprice as decimal(5,1)) from orders where o_orderkey = 1
select cast(l_extendedprice/7 as decimal(15,6)) from lineitem where l_orderkey = 1 order by l_linenumber
select cast(o_orderdate as char), cast(o_orderkey as char) from orders where o_orderkey <= 3 order by o_orderkey
select cast(o_totalprice as double), cast(o_orderkey * 1.5 as signed) from orders where o_orderkey <= 3 order by o_orderkey
select cast(n_nationkey as decimal(3,1)) from nation where n_nationkey >= 8 order by n_nationkey
known unsigned
select cast(1 as unsigned)
known unsigned
select cast(o_orderkey as unsigned) from orders where o_orderkey = 1
known unsigned
select cast(-1 as unsigned)

# --- dates and intervals
select date '2000-01-31' + interval 1 month, date '2000-02-29' + interval 1 year, date '2000-03-31' - interval 1 month
select date '9999-12-31' + interval 1 day
select date '0001-01-01' - interval 1 day
select date '9999-12-01' + interval 1 month
select date '9999-12-31' - interval 3652058 day
select date '1998-12-01' - interval 90 day, date '1994-01-01' + interval 1 year
select date '1995-01-01' + interval 3 quarter, date '1995-01-01' + interval 2 week
select date_add(date '2000-01-01', interval -1 day), date_sub(date '2000-01-01', interval -1 month)
select date '2000-01-01' + interval 100000 year
select o_orderdate + interval 1 month, o_orderdate - interval 1 year from orders where o_orderkey <= 7 order by o_orderkey
select o_orderdate + interval 8000 year from orders where o_orderkey = 1
select o_orderdate - interval 2000 year from orders where o_orderkey = 1
select o_orderdate + interval o_orderkey day, o_orderdate + interval o_orderkey month from orders where o_orderkey <= 7 order by o_orderkey
known intervalparen
select o_orderdate + interval (o_orderkey * 1000000) day from orders where o_orderkey <= 7 order by o_orderkey
select o_orderdate + interval o_orderkey * 1000000 day from orders where o_orderkey <= 7 order by o_orderkey
select datediff(date '2000-03-01', date '2000-02-01'), datediff(o_orderdate, date '1992-01-01') from orders where o_orderkey <= 3 order by o_orderkey
select o_orderdate < date '1995-03-15', o_orderdate = '1996-01-02', o_orderdate between '1995-01-01' and '1996-12-31' from orders where o_orderkey <= 7 order by o_orderkey
known datearith
select l_shipdate - l_commitdate from lineitem where l_orderkey = 1 order by l_linenumber

# --- EXTRACT and date parts
select extract(year from date '1996-02-29'), extract(month from date '1996-02-29'), extract(day from date '1996-02-29')
select extract(quarter from date '1996-11-01'), extract(week from date '1996-01-07')
select extract(year_month from date '1996-02-29')
select extract(year from o_orderdate), extract(month from o_orderdate), extract(day from o_orderdate) from orders where o_orderkey <= 7 order by o_orderkey
select year(o_orderdate), month(o_orderdate), dayofmonth(o_orderdate), quarter(o_orderdate) from orders where o_orderkey <= 7 order by o_orderkey
select dayofweek(o_orderdate), dayofyear(o_orderdate), weekday(o_orderdate) from orders where o_orderkey <= 7 order by o_orderkey
select quarter(date '1996-03-31'), quarter('1996-04-01'), dayofweek(date '1996-01-07'), weekday(date '1996-01-07'), dayofyear(date '1996-12-31'), dayofyear(date '1995-12-31'), quarter(null)
select week(date '1996-01-06'), week(date '1996-01-07'), week(date '1995-01-01'), week(date '1996-12-31'), week(date '2000-01-01'), week(date '2000-12-31', 0), extract(week from date '2017-01-01')
select week(o_orderdate), extract(week from o_orderdate), extract(quarter from o_orderdate), extract(year_month from o_orderdate) from orders where o_orderkey <= 7 order by o_orderkey
select dayofweek(l_shipdate), weekday(l_shipdate), week(l_shipdate), dayofyear(l_shipdate) from lineitem where l_orderkey <= 3 order by l_orderkey, l_linenumber
select extract(year from l_shipdate) - extract(year from l_commitdate) from lineitem where l_orderkey = 1 order by l_linenumber

# --- SUBSTRING and string functions
select substring('hello', 0), substring('hello', 1, 0), substring('hello', -3), substring('hello', -3, 2)
select substring('hello', 2), substring('hello', 2, 100), substring('hello', 6), substring('hello', -6)
select substring('hello', 1, -1), substring('hello' from 2 for 3), substr('hello', 3)
select substring('héllo', 2, 2), length('héllo'), char_length('héllo')
select substring(n_name, 1, 3), substring(n_name, -2), substring(n_name, 0, 2) from nation where n_nationkey <= 5 order by n_nationkey
select substring(c_phone, 1, 2), substring(c_phone from 4) from customer where c_custkey <= 5 order by c_custkey
select substring(n_name, n_regionkey, 2), substring(n_name, -n_regionkey) from nation where n_nationkey <= 5 order by n_nationkey
select upper(n_name), lower(n_name), length(n_name), char_length(r_comment) from nation, region where n_regionkey = r_regionkey and n_nationkey <= 3 order by n_nationkey
select concat(n_name, '-', n_nationkey), concat('a', null), trim('  x  '), ltrim('  x'), rtrim('x  ') from nation where n_nationkey = 1
select concat(n_name, r_name) from nation, region where n_regionkey = r_regionkey and n_nationkey <= 3 order by n_nationkey
select length(n_comment), substring(n_comment, 1, 5) from nation where n_nationkey <= 3 order by n_nationkey
select left(n_comment, 5), right(n_comment, 5) from nation where n_nationkey <= 3 order by n_nationkey
select replace(n_name, 'A', 'x'), reverse(n_name) from nation where n_nationkey <= 3 order by n_nationkey
select left('héllo', 2), right('héllo', 2), left('abc', 0), left('abc', -1), right('abc', 10), left(null, 1), left('abc', null), left(12345, 2), right('abc', '2')
select replace('aaaa', 'aa', 'b'), replace('abc', '', 'x'), replace('abc', 'b', ''), replace('AbAb', 'a', 'x'), replace(null, 'a', 'b'), replace('héllo', 'é', 'e'), reverse('héllo'), reverse(''), reverse(null), reverse(123)
select left(n_name, n_regionkey), right(n_name, n_regionkey - 1), replace(n_comment, ' ', ''), reverse(r_name) from nation, region where n_regionkey = r_regionkey and n_nationkey <= 5 order by n_nationkey

# --- LIKE
select 'abc' like 'a_c', 'abc' like 'a%', 'abc' like '%c', 'abc' like '_', 'abc' like '___', 'abc' like '%%%'
select 'a_c' like 'a\_c', 'abc' like 'a\_c', 'a%c' like 'a\%c', '' like '%', '' like '_'
select 'abc' like 'ABC', 'ABC' like 'a%'
select n_name from nation where n_name like 'A%' order by n_name
select n_name from nation where n_name like '%A' order by n_name
select n_name from nation where n_name like '_R%' order by n_name
select n_name from nation where n_name like '%N_' order by n_name
select n_name from nation where n_name not like '%A%' order by n_name
select n_name from nation where n_name like 'a%' order by n_name
select n_name like '%I%A%', n_name like '%_%' from nation where n_nationkey <= 5 order by n_nationkey
select count(*) from nation where n_comment like '%the%'
select count(*) from customer where c_custkey <= 5 and c_phone like '__-%'

# --- string comparison (MariaDB runs with utf8mb4_bin, colink's collation)
select 'a' = 'A', 'a' < 'B', 'B' < 'a', 'a' = 'a ', 'abc' > 'ab'
select n_name from nation where n_name < 'C' order by n_name
select n_name from nation where n_name >= 'germany' order by n_name
select n_name from nation where n_name = 'FRANCE'
select n_name from nation where n_name = 'FRANCE   '
select min(n_name), max(n_name) from nation
select n_name from nation order by n_name desc limit 3
select strcmp('a', 'b'), strcmp('b', 'a'), strcmp('a', 'a')
known unsigned
select cast(5 as unsigned), convert('7', unsigned integer), cast(null as unsigned), cast(2.6 as unsigned), cast(0 as unsigned), cast(9223372036854775807 as unsigned)
known unsigned
select n_nationkey, cast(n_regionkey as unsigned), convert(n_nationkey * 2, unsigned) from nation where n_nationkey <= 4 order by 1
select locate('b', 'abcb'), locate('b', 'abcb', 3), locate('', 'abc'), locate('', 'abc', 4), locate('', 'abc', 5), locate('x', 'abc'), locate('b', 'abc', 0), locate('b', 'abc', -1)
select locate('é', 'héllo é'), locate('é', 'héllo é', 3), position('lo' in 'héllo'), instr('héllo', 'llo'), instr('abc', ''), locate(null, 'a'), locate('a', null), locate(1, 212), locate('', ''), instr('', '')
select n_name, locate('A', n_name), instr(n_name, 'AN'), locate('A', n_name, 3) from nation where n_nationkey <= 8 order by n_nationkey
select strcmp('a', 'ab'), strcmp('', ''), strcmp('b', null), strcmp('é', 'e'), strcmp(10, 9)
select strcmp(n_name, 'CHINA'), strcmp(n_name, r_name) from nation, region where n_regionkey = r_regionkey and n_nationkey <= 5 order by n_nationkey
select n_name in ('ALGERIA', 'algeria', 'BRAZIL ') from nation where n_nationkey <= 2 order by n_nationkey

# --- NULL, CASE, COALESCE, IF and their types
select null + 1, null = null, 1 <=> null, null and 0, null or 1
select null <=> null
select nullif(o_orderkey, 1) <=> null, nullif(o_orderkey, 1) <=> nullif(o_orderkey, 2) from orders where o_orderkey <= 3 order by o_orderkey
select coalesce(null, 1), coalesce(null, 1.5), coalesce(null, 'a'), coalesce(1, 1.50), coalesce(null, null)
select ifnull(null, 2), ifnull(1.5, 2), nullif(1, 1), nullif(1, 2), if(1, 2, 3.5), if(0, 'a', 1)
select case when 1 then 1 else 2.5 end, case 2 when 1 then 'a' else 'b' end, case when 0 then 1 end
select case when 1 then 1 else 'x' end
select case when 1 then 1.5 else 1e0 end
select case when o_orderkey = 1 then o_totalprice else o_orderkey end from orders where o_orderkey <= 3 order by o_orderkey
select case when o_orderkey > 2 then o_totalprice end from orders where o_orderkey <= 3 order by o_orderkey
select coalesce(nullif(o_orderkey, 2), 0), ifnull(nullif(o_orderkey, 1), 1.5) from orders where o_orderkey <= 3 order by o_orderkey
select if(o_orderkey > 1, o_totalprice, o_orderkey / 3) from orders where o_orderkey <= 3 order by o_orderkey
select if(o_orderkey > 1, o_orderdate, null), coalesce(null, o_orderdate) from orders where o_orderkey <= 3 order by o_orderkey
select case o_orderstatus when 'F' then 1 when 'O' then 2.5 else null end from orders where o_orderkey <= 7 order by o_orderkey
select count(*), count(nullif(o_orderkey, 1)), sum(nullif(o_orderkey, 1)), avg(nullif(o_orderkey, 1)), min(nullif(o_orderkey, 1)) from orders where o_orderkey <= 7
select sum(case when o_orderkey > 100 then o_totalprice end), avg(case when o_orderkey > 100 then o_totalprice end), count(case when o_orderkey > 100 then 1 end) from orders where o_orderkey <= 7
select max(case when o_orderkey > 100 then o_orderdate end), min(case when o_orderkey > 100 then o_comment end) from orders where o_orderkey <= 7
select null in (1, 2), 1 in (1, null), 3 in (1, null), 3 not in (1, null), null between 1 and 2
select o_orderkey in (1, null), o_orderkey not in (2, null) from orders where o_orderkey <= 3 order by o_orderkey
select sum(l_quantity) from lineitem where l_orderkey = 100000000
select count(*), sum(o_totalprice), avg(o_totalprice), min(o_orderdate) from orders where o_orderkey < 0

# --- SUM and AVG result types and scales
select sum(l_quantity), sum(l_extendedprice), sum(l_discount), sum(l_extendedprice*(1-l_discount)) from lineitem where l_orderkey <= 7
select avg(l_quantity), avg(l_extendedprice), avg(l_discount), avg(l_extendedprice*(1-l_discount)) from lineitem where l_orderkey <= 7
select sum(o_orderkey), avg(o_orderkey), sum(n_nationkey), avg(n_nationkey) from orders, nation where o_orderkey <= 7 and n_nationkey = 1
select avg(n_nationkey), sum(n_nationkey), avg(n_regionkey) from nation
select avg(l_quantity) * 2, sum(l_quantity) / count(*), avg(l_quantity * 1e0) from lineitem where l_orderkey <= 7
select l_orderkey, sum(l_quantity), avg(l_extendedprice), count(*) from lineitem where l_orderkey <= 7 group by l_orderkey order by l_orderkey
known aggquotient
select avg(o_totalprice / 3), sum(o_totalprice / 3) from orders where o_orderkey <= 7
select 0.2 * avg(l_quantity), 0.5 * sum(l_quantity) from lineitem where l_orderkey <= 7
select sum(1.5), avg(1.5), sum(1), avg(1), sum(1e0) from nation
select count(distinct n_regionkey), sum(distinct n_regionkey), avg(distinct n_regionkey) from nation
select max(l_extendedprice) - min(l_extendedprice), max(l_discount) from lineitem where l_orderkey <= 7

# --- arithmetic result types
select 1 + 1, 1 + 1.5, 2 * 1.25, 1.10 + 2.205, 1 - 1.0, -1.5
select o_orderkey + 1, n_nationkey + 1, n_nationkey * 2, o_totalprice + 1, o_totalprice * 2, o_totalprice * o_totalprice from orders, nation where o_orderkey = 1 and n_nationkey = 3
select n_nationkey / 2, n_nationkey div 2, -n_nationkey from nation where n_nationkey = 3
select l_quantity * l_discount, l_quantity - l_extendedprice, l_discount * l_tax * l_quantity from lineitem where l_orderkey = 1 order by l_linenumber
select 123456789012345.67 * 1000
select 99999999999999999999999999999999999 + 1
select 0.1 + 0.2 = 0.3, 0.1e0 + 0.2e0 = 0.3e0
select 1 = 1.0, 1 = '1', 1.5 = '1.5'
# MariaDB reads 'a' as 0 and warns; colink fails with 1292
known warnings
select 'a' = 0
select 2 > 1.5, 1.5 > 2, 10 > 9e0, '10' > '9', 10 > '9'

# --- LIMIT and ORDER BY edge cases
select n_name from nation order by n_nationkey limit 0
select n_name from nation order by n_nationkey limit 3 offset 23
select n_name from nation order by n_nationkey limit 3 offset 25
select n_name from nation order by n_nationkey limit 25, 5
select n_name from nation order by n_nationkey limit 18446744073709551615
select n_name from nation order by n_nationkey limit 2 offset 0
select n_regionkey, count(*) from nation group by n_regionkey order by n_regionkey limit 2
select o_orderkey from orders where o_orderkey <= 7 order by o_totalprice desc limit 1
select o_orderkey, o_orderkey/3 as q from orders where o_orderkey <= 7 order by q desc limit 2

# --- misc functions and predicates
select greatest(1, 2.5, 3), least(1, 2.5, 3), greatest('a', 'B'), least(1, null)
select cast('12.9' as signed), cast('-12.9' as signed), cast('1e3' as signed), cast(' 12' as signed), cast('+7' as signed), cast(3.5e0 as signed), cast(-0.5e0 as signed), cast(2.5e0 as decimal(5,0))
select cast(concat(o_orderkey, '.5') as signed), cast(concat('-', o_orderkey, '.9') as signed), cast(o_orderkey + 0.5e0 as signed), cast(concat(o_orderkey, 'e2') as signed) from orders where o_orderkey <= 7 order by o_orderkey
select greatest(o_orderkey, 3), least(o_totalprice, 100000) from orders where o_orderkey <= 3 order by o_orderkey
select greatest(7, 2, 9), least(7, 2, 9), greatest(1.5, 2.25), least(1e0, 2), greatest('b', 'ab', 'a'), least(date '1996-01-02', date '1995-12-31'), greatest(3, null, 1)
select greatest(o_orderkey, 2, 3), least(o_orderkey, 2.5), greatest(o_totalprice, 100000.5), least(o_orderdate, date '1996-01-01'), greatest(o_orderstatus, 'G'), least(o_orderkey, null) from orders where o_orderkey <= 7 order by o_orderkey
select sign(-2.5), sign(0), mod(10, 3), mod(-10, 3), mod(10.5, 3)
select 5 between 1 and 10, 5 between 10 and 1, 'b' between 'a' and 'c'
select o_orderkey between 2 and 4, o_totalprice between 100000 and 200000 from orders where o_orderkey <= 7 order by o_orderkey
select not 1, not 0, not null, 1 xor 1, 1 and null, 0 and null
select o_orderkey > 2 and o_totalprice > 100000, o_orderkey > 2 or null from orders where o_orderkey <= 3 order by o_orderkey
select exists (select 1 from nation where n_nationkey = 1), (select max(n_nationkey) from nation)
select n_name from nation where n_regionkey in (select r_regionkey from region where r_name like 'A%') order by n_name
select n_name, (select r_name from region where r_regionkey = n_regionkey) from nation where n_nationkey <= 3 order by n_nationkey

# --- more edges: double formatting, modulo signs, rounding of negatives on columns
select 1e20, 1e-7, 123456789012345678e0, 0.1e0 * 3, 1e15 + 0.3e0, -0e0
select 0e0 * -1, concat(-0e0), cast(-0e0 as char), round(-0.4e0), ceil(-0.5e0)
select o_orderkey * -0e0, concat(o_orderkey * -0e0) from orders where o_orderkey <= 2 order by o_orderkey
select o_orderkey * 1e20, o_orderkey * 1e-7, o_orderkey / 7e0 from orders where o_orderkey <= 3 order by o_orderkey
select cast(1e20 as char), cast(0.1e0 as char), cast(1/3e0 as char)
select cast(1/3 as char), concat(1/3, ''), length(1/3), cast(-2/3 as char(4)), concat(7/2)
select cast(o_orderkey/3 as char), concat(o_orderkey/3, ''), length(o_orderkey/3), concat(o_totalprice/7) from orders where o_orderkey <= 7 order by o_orderkey
select round(1e308, 2), round(-1.5e308, 1), round(1.7976931348623157e308, -2), truncate(1e308, 3)
select round(o_orderkey * 1e307, 2), truncate(o_orderkey * -1e307, 1) from orders where o_orderkey <= 7 order by o_orderkey
select cast((0.000000001 * 100.00 - 101.00) / 1 as double), cast(1000000000/3 as double), (2/3) * 1e0
select cast((o_orderkey * 0.000000001 - 101.00) / 1 as double), cast(o_orderkey * 1000000000 / 3 as double), (o_orderkey / 3) * 1e0 from orders where o_orderkey <= 7 order by o_orderkey
select -7.5 % 2, 7.5 % -2, -7 % 2.5, mod(-o_orderkey, 3), -o_totalprice % 100 from orders where o_orderkey <= 3 order by o_orderkey
select round(-o_orderkey / 2), round(-o_totalprice, -3), truncate(-o_totalprice, -2) from orders where o_orderkey <= 3 order by o_orderkey
known roundscale
select round(o_totalprice, 5), round(1.5, 3) from orders where o_orderkey <= 3 order by o_orderkey
select round(o_orderkey * 1.5e0), round(-o_orderkey * 1.5e0), round(o_orderkey / 4e0, 1) from orders where o_orderkey <= 7 order by o_orderkey
select abs(o_orderkey - 5), -(-o_orderkey) from orders where o_orderkey <= 7 order by o_orderkey
known negprecision
select abs(-o_totalprice), -o_totalprice from orders where o_orderkey <= 7 order by o_orderkey
select o_orderkey in (1, 2.0, '3'), o_totalprice in (172799.49, 38426.09) from orders where o_orderkey <= 7 order by o_orderkey
select o_orderkey in (1/1, 4/2), o_orderkey / 2 in (0.5, 1, 1.5) from orders where o_orderkey <= 7 order by o_orderkey
select o_orderdate in ('1996-01-02', date '1993-10-14'), o_orderstatus in ('F', 'P') from orders where o_orderkey <= 7 order by o_orderkey
select o_orderdate between date '1995-01-01' and date '1996-01-02', o_clerk between 'Clerk#000000500' and 'Clerk#000000900' from orders where o_orderkey <= 7 order by o_orderkey

# --- date edges over columns
select o_orderdate + interval 1 day, o_orderdate - interval 1 day, o_orderdate + interval -12 month from orders where o_orderkey <= 7 order by o_orderkey
select date_add(o_orderdate, interval 3 quarter), date_sub(o_orderdate, interval 2 week), o_orderdate + interval 10 year from orders where o_orderkey <= 7 order by o_orderkey
select o_orderdate + interval 2000000 day, o_orderdate - interval 730000 day, o_orderdate + interval 100000 month from orders where o_orderkey <= 3 order by o_orderkey
select date '1996-02-29' + interval 1 year, date '1996-02-29' - interval 4 year, date '2000-12-31' + interval 2 month, date '2001-01-31' + interval 1 month
select l_shipdate > l_commitdate, l_receiptdate - interval 30 day < l_shipdate, datediff(l_receiptdate, l_shipdate) from lineitem where l_orderkey = 1 order by l_linenumber
select extract(day from o_orderdate + interval 1 month), extract(year from o_orderdate - interval 1990 year) from orders where o_orderkey <= 7 order by o_orderkey
known daterange
select extract(year from o_orderdate - interval 1994 year) from orders where o_orderkey <= 7 order by o_orderkey
known missing
select cast(o_orderdate as signed), cast(o_orderdate as decimal(10,2)), o_orderdate = 19960102 from orders where o_orderkey <= 3 order by o_orderkey
select cast(concat('1996-02-', o_orderkey + 27) as date) from orders where o_orderkey <= 3 order by o_orderkey
select max(o_orderdate), min(o_orderdate), count(distinct o_orderdate) from orders where o_orderkey <= 7

# --- strings over columns
select substring(o_comment, o_orderkey, o_orderkey), substring(o_comment, -o_orderkey, 2), substring(o_comment, 100) from orders where o_orderkey <= 3 order by o_orderkey
select concat(o_orderstatus, o_orderpriority), length(o_orderpriority), o_orderpriority < '3' from orders where o_orderkey <= 7 order by o_orderkey
select o_comment like concat('%', substring(o_comment, 3, 4), '%'), o_comment like '%.' from orders where o_orderkey <= 7 order by o_orderkey
select c_phone like '1_-%', c_phone like '%-___-____', c_mktsegment like 'BUILD%', c_name like 'Customer#00000000_' from customer where c_custkey <= 5 order by c_custkey
select upper(c_mktsegment) = c_mktsegment, lower(c_name), concat(c_name, null) from customer where c_custkey <= 5 order by c_custkey
select trim(concat('  ', n_name, '  ')), length(trim(concat('  ', n_name, '  '))), ltrim(concat(' ', n_name)), rtrim(concat(n_name, ' ')) from nation where n_nationkey <= 3 order by n_nationkey
select n_name = concat(n_name, ' '), n_name < concat(n_name, ' '), n_name like concat(n_name, '%') from nation where n_nationkey <= 3 order by n_nationkey

# --- aggregates: NULLs, empty input, grouping
select n_regionkey, sum(n_nationkey), avg(n_nationkey), min(n_name), max(n_comment < 'm') from nation group by n_regionkey order by n_regionkey
select count(*), count(o_orderkey), sum(o_orderkey), avg(o_totalprice), max(o_comment) from orders where o_orderkey > 1000000000
select o_orderstatus, count(*), sum(o_totalprice), avg(o_orderkey) from orders where o_orderkey <= 7 group by o_orderstatus order by o_orderstatus
select sum(l_quantity * l_extendedprice), avg(l_tax + l_discount), sum(l_quantity) / sum(l_extendedprice) from lineitem where l_orderkey <= 7
select l_returnflag, l_linestatus, sum(l_quantity), avg(l_discount), count(*) from lineitem where l_orderkey <= 7 group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus
select sum(case when l_returnflag = 'R' then l_extendedprice else 0 end) / sum(l_extendedprice) from lineitem where l_orderkey <= 7
select 100.00 * sum(case when l_shipmode like 'AIR%' then l_extendedprice * (1 - l_discount) else 0 end) / sum(l_extendedprice * (1 - l_discount)) from lineitem where l_orderkey <= 7
select count(*) from lineitem where l_orderkey <= 7 and l_discount between 0.06 - 0.01 and 0.06 + 0.01 and l_quantity < 24
select sum(l_extendedprice) / 7.0 from lineitem where l_orderkey <= 7

# --- NULL ordering, DIV and % on decimals and doubles, mixed comparisons
select nullif(o_orderkey, 3) as k from orders where o_orderkey <= 7 order by k
select nullif(o_orderkey, 3) as k from orders where o_orderkey <= 7 order by k desc
select o_totalprice div 1000, o_totalprice div 0.7, 7.5e0 div 2, -7.5e0 div 2, -7.5 div 2, o_totalprice % 7.5e0 from orders where o_orderkey <= 3 order by o_orderkey
select o_orderkey * 2.5e0 div 2, -o_orderkey * 2.5e0 div 2, o_orderkey * 2.5 div 2, 1e30 div 1, 5 div 2.5e0 from orders where o_orderkey <= 3 order by o_orderkey
select o_totalprice > 1.5e5, o_totalprice = 172799.49e0, l_discount = 0.04e0 from orders, lineitem where o_orderkey = 1 and l_orderkey = 1 order by l_linenumber
select if(o_orderkey > 2, o_orderdate, 'none'), case when o_orderkey > 2 then o_orderkey else 'x' end from orders where o_orderkey <= 3 order by o_orderkey
select distinct l_discount * 1 from lineitem where l_orderkey <= 7 order by 1
select l_discount, count(*) from lineitem where l_orderkey <= 7 group by l_discount order by l_discount desc
select round(l_discount * 100) as pct, sum(l_quantity) from lineitem where l_orderkey <= 7 group by pct order by pct
select o_orderkey % 2 as parity, avg(o_totalprice), max(o_orderdate) from orders where o_orderkey <= 7 group by parity order by parity
select count(*) from orders where o_orderkey <= 7 and o_totalprice > (select avg(o_totalprice) from orders where o_orderkey <= 7)
select o_orderkey, o_totalprice - (select min(o_totalprice) from orders where o_orderkey <= 7) from orders where o_orderkey <= 7 order by o_orderkey
select -0.0, 0.0 = -0.0, -0e0 = 0e0, 0 * -1.5
select 1.0 / 3.0, 1.00 / 3.00, 5 / 2.0, 10.5 / 3
select o_orderkey / 2.0, o_totalprice / 3.00, o_totalprice / o_totalprice from orders where o_orderkey <= 3 order by o_orderkey

# --- GROUP_CONCAT (with ORDER BY inside, so that the values' order is defined)
select l_orderkey, group_concat(l_linenumber order by l_linenumber) from lineitem where l_orderkey <= 7 group by l_orderkey order by l_orderkey
select l_orderkey, group_concat(distinct l_returnflag order by l_returnflag separator '') from lineitem where l_orderkey <= 7 group by l_orderkey order by l_orderkey
select group_concat(n_name order by n_nationkey desc separator '; ') from nation where n_regionkey = 1
select n_regionkey, group_concat(n_nationkey, '-', n_name order by n_name separator ', ') from nation group by n_regionkey order by n_regionkey
select group_concat(l_quantity order by l_quantity, l_linenumber), group_concat(l_extendedprice order by l_quantity, l_linenumber separator '/') from lineitem where l_orderkey = 1
select group_concat(o_orderdate order by o_orderdate desc), group_concat(o_totalprice order by o_orderdate desc) from orders where o_orderkey <= 7
select group_concat(n_name order by n_name) from nation where n_nationkey > 100
select r_name, group_concat(case when n_nationkey > 10 then n_name end order by n_name) from region join nation on n_regionkey = r_regionkey group by r_name order by r_name
select count(*), group_concat(c_custkey order by c_custkey desc), group_concat(distinct c_mktsegment) from customer where c_custkey <= 1
known concatorder
select count(*), group_concat(c_custkey order by c_custkey desc), group_concat(distinct c_mktsegment order by c_mktsegment desc) from customer where c_custkey <= 5
select group_concat(n_name order by 1 desc) from nation where n_regionkey = 2
select group_concat(distinct n_regionkey order by n_regionkey desc separator '') from nation
select length(group_concat(n_name order by n_name separator '')) from nation
