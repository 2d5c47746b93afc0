# growth.py SF1.json SF10.json: per query, warm medians of colink and DuckDB at both scales, the growth, the SF 10 ratio, and the cold round.
import json,statistics as st,sys
# growth.py SF1.json SF10.json: per query warm medians of colink and DuckDB at both scales, growth, SF10 ratio
def med(f):
    d=json.load(open(f)); out={}
    for s in d['samples']:
        if s['cold'] or s.get('error'): continue
        out.setdefault((s['system'],s['query']),[]).append(s['elapsed_s'])
    return {k:st.median(v) for k,v in out.items()}
def cold(f):
    d=json.load(open(f)); return {(s['system'],s['query']):s['elapsed_s'] for s in d['samples'] if s['cold'] and not s.get('error')}
a,b=med(sys.argv[1]),med(sys.argv[2]); cb=cold(sys.argv[2])
qs=sorted({q for (_,q) in b}, key=lambda k:(k[0]!='Q', int(k[1:]) if k[0]=='Q' else int(k[2:])))
print('| query | colink SF 1 | colink SF 10 | growth | DuckDB SF 1 | DuckDB SF 10 | growth | SF 10 colink/DuckDB warm | cold colink | cold DuckDB | cold ratio |')
print('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
T={}
for q in qs:
    c1,c10,d1,d10=a[('colink',q)],b[('colink',q)],a[('duckdb',q)],b[('duckdb',q)]
    cc,cd=cb.get(('colink',q)),cb.get(('duckdb',q))
    print(f'| {q} | {c1:.3f} | {c10:.3f} | {c10/c1:.1f}× | {d1:.3f} | {d10:.3f} | {d10/d1:.1f}× | {c10/d10:.2f} | {cc:.2f} | {cd:.2f} | {cc/cd:.2f} |')
    if q.startswith('Q'):
        for k,v in (('c1',c1),('c10',c10),('d1',d1),('d10',d10),('cc',cc),('cd',cd)): T[k]=T.get(k,0)+v
print(f"| **Q1–Q22** | {T['c1']:.2f} | {T['c10']:.2f} | {T['c10']/T['c1']:.1f}× | {T['d1']:.2f} | {T['d10']:.2f} | {T['d10']/T['d1']:.1f}× | {T['c10']/T['d10']:.2f} | {T['cc']:.1f} | {T['cd']:.1f} | {T['cc']/T['cd']:.2f} |")
