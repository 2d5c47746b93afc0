// A JDBC client of colink's exemgr (MariaDB Connector/J), run by TestOtherClients as
// java -cp mariadb-java-client.jar ColinkJDBC.java URL. It prints what it reads, one line
// a row, for the test to compare with go-sql-driver's answers.
import java.sql.*;

public class ColinkJDBC {
    static void print(ResultSet rs) throws SQLException {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            for (int i = 1; i <= n; i++) {
                if (i > 1) b.append('|');
                b.append(rs.getString(i));
            }
            System.out.println(b);
        }
    }

    public static void main(String[] args) throws Exception {
        try (Connection c = DriverManager.getConnection(args[0])) {
            try (Statement s = c.createStatement()) {
                System.out.println("# text");
                print(s.executeQuery("select n_nationkey, n_name, n_regionkey from nation where n_regionkey = 2 order by 1"));
            }
            try (PreparedStatement p = c.prepareStatement(
                    "select n_name, n_regionkey from nation where n_nationkey between ? and ? order by n_nationkey")) {
                System.out.println("# prepared");
                p.setInt(1, 3);
                p.setInt(2, 5);
                print(p.executeQuery());
                p.setLong(1, 24);
                p.setLong(2, 30);
                print(p.executeQuery());
            }
            try (PreparedStatement p = c.prepareStatement(
                    "select max(o_orderdate), sum(o_totalprice), count(*) from orders where o_orderkey < ? and o_orderdate >= ?")) {
                System.out.println("# types");
                p.setInt(1, 100);
                p.setDate(2, Date.valueOf("1990-01-01"));
                print(p.executeQuery());
            }
            System.out.println("# metadata");
            DatabaseMetaData md = c.getMetaData();
            System.out.println(md.getDatabaseProductName() + " " + md.getDatabaseMajorVersion());
            try (ResultSet rs = md.getColumns("tpch", null, "region", null)) {
                while (rs.next()) System.out.println(rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("COLUMN_SIZE"));
            }
            try (ResultSet rs = md.getTables("tpch", null, "%", new String[] {"TABLE"})) {
                StringBuilder b = new StringBuilder("tables");
                while (rs.next()) b.append(' ').append(rs.getString("TABLE_NAME"));
                System.out.println(b);
            }
            try (ResultSet rs = md.getPrimaryKeys("tpch", null, "region")) {
                int n = 0;
                while (rs.next()) n++;
                System.out.println("primary key columns " + n);
            }
            try (ResultSet rs = md.getIndexInfo("tpch", null, "region", false, false)) {
                int n = 0;
                while (rs.next()) n++;
                System.out.println("indexes " + n);
            }
            System.out.println("# error");
            try (Statement s = c.createStatement()) {
                s.executeQuery("select * from nosuch");
                System.out.println("no error");
            } catch (SQLException e) {
                System.out.println(e.getErrorCode() + " " + e.getSQLState() + " " + (e.getMessage().contains("nosuch") ? "names the table" : e.getMessage()));
            }
        }
    }
}
