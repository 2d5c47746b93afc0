package sql_test

import (
	"context"
	"errors"
	"testing"

	"github.com/colinkdb/colink/sql"
	"github.com/colinkdb/colink/sql/catalog"
	"github.com/colinkdb/colink/sql/plan"
	"github.com/colinkdb/colink/sql/sqlerr"
)

// TestRobust plans assorted corner cases: each either fails with a MySQL error or yields a
// plan that passes plan.Check; none panics.
func TestRobust(t *testing.T) {
	qs := []string{
		"select * from nation where n_nationkey in (select n_nationkey from nation where n_regionkey in (select r_regionkey from region where r_name = n_name))",
		"select (select 1)",
		"select (select n_name from nation limit 1)",
		"select exists (select 1)",
		"select 1 where exists (select * from nation)",
		"select count(*) from nation where not exists (select * from region where r_regionkey = n_regionkey) or n_nationkey > 3",
		"select n_name from nation order by (select count(*) from region where r_regionkey = n_regionkey)",
		"select sum(n_nationkey), (select count(*) from region) from nation",
		"select n_regionkey, (select count(*) from region r where r.r_regionkey = nation.n_regionkey) from nation group by n_regionkey",
		"select * from nation, (select * from region) r where r.r_regionkey = n_regionkey",
		"select * from nation a join nation b on a.n_nationkey = b.n_nationkey join region on a.n_regionkey = r_regionkey",
		"select * from nation a left join (nation b join region on b.n_regionkey = r_regionkey) on a.n_nationkey = b.n_nationkey",
		"select a.n_name from nation a where a.n_nationkey = (select max(b.n_nationkey) from nation b where b.n_regionkey = a.n_regionkey and b.n_name < a.n_name)",
		"select n_name from nation where n_nationkey = (select count(*) from region where r_regionkey = n_regionkey)",
		"select 1 from nation where null",
		"select 1 from nation where 1 = 0",
		"select n_name from nation where n_nationkey not in (select null)",
		"select n_name from nation where n_nationkey in (select null)",
		"select null = null, null + 1, null and true, coalesce(null, 1)",
		"select case when n_nationkey > 3 then null else n_name end from nation",
		"select sum(null), count(null), avg(null) from nation",
		"select distinct count(*) from nation group by n_regionkey",
		"select n_regionkey as k, count(*) from nation group by k order by k",
		"select n_regionkey + 1 as k, count(*) from nation group by n_regionkey + 1 order by n_regionkey + 1",
		"select n_name, n_name from nation order by n_name",
		"select * from nation order by 1 limit 2 offset 3",
		"select * from nation limit 0",
		"with a as (select 1 as x), b as (select x + 1 as y from a) select * from b, a",
		"with a as (select 1 as x) select * from (with a as (select 2 as x) select * from a) t, a",
		"select substring(n_name, -3), substr(n_name from 2), left(n_name, 2) from nation",
		"select 1.5 * 2, 10 / 4, 10 div 4, 10 % 4, -(-3), 2.5e0 * 2",
		"select * from lineitem where l_shipdate between date '1995-01-01' and '1995-12-31' + interval 1 day",
		"select o_orderdate from orders where o_orderdate = '1995-01-01' or o_orderdate in ('1996-01-01', date '1997-01-01')",
		"select count(distinct l_orderkey), count(distinct l_partkey) from lineitem",
		"select sum(distinct l_quantity) from lineitem",
		"select * from nation natural join region",
		"select c_custkey from customer where c_custkey in (select o_custkey from orders where o_orderkey in (select l_orderkey from lineitem where l_partkey = c_custkey))",
		"select (select (select 1))",
		"select n_name from nation n where exists (select 1 from region r where r.r_regionkey = n.n_regionkey and exists (select 1 from nation n2 where n2.n_regionkey = r.r_regionkey))",
		"select n_name from nation where n_nationkey > any (select 1)",
		"select cast(n_nationkey as char), cast('12.5' as decimal(5,2)), cast(n_name as date) from nation",
		"select 'a' < 'b', 'a' = 1, 1 = '1', 1 < 2.5, date '1995-01-01' < '1996-01-01'",
		"select count(*) from nation having count(*) > 1",
		"select n_name from nation having n_name > 'A'",
		"select * from nation where n_nationkey = 1 and n_nationkey = 2",
		"select avg(o_totalprice), min(o_comment), max(o_orderdate) from orders group by o_orderstatus having avg(o_totalprice) > 5",
		"select @@version_comment, @@global.autocommit, @undefined",
		"select 1 from (select 1) t join (select 2) u on true",
		"select * from nation where n_regionkey in (select r_regionkey from region union select 1)",
		"select * from region right join nation using (n_regionkey)",
		"select count(*) from lineitem l1 where l1.l_quantity > (select avg(l2.l_quantity) from lineitem l2 where l2.l_orderkey = l1.l_orderkey) and l1.l_orderkey in (select o_orderkey from orders)",
	}
	p := sql.NewParser()
	planner := &sql.Planner{Catalog: catalog.TPCH("tpch"), Stats: catalog.TPCHMeasuredSF1()}
	for _, q := range qs {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", q, r)
				}
			}()
			stmts, err := p.Parse(q)
			if err == nil {
				var res *plan.Query
				res, err = planner.Plan(context.Background(), testEnv{db: "tpch"}, stmts[0])
				if err == nil {
					if err := plan.Check(res); err != nil {
						t.Errorf("%s: %v\n%s", q, err, plan.Format(res, plan.FormatOptions{}))
					}
					return
				}
			}
			var se *sqlerr.Error
			if !errors.As(err, &se) {
				t.Errorf("%s: %v is not a MySQL error", q, err)
			}
		}()
	}
}
