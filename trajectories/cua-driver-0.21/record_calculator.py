import json,subprocess,sys,time,select,os
p=subprocess.Popen(['/work/cuadrv-target/release/cua-driver','mcp'],stdin=subprocess.PIPE,stdout=subprocess.PIPE,stderr=open('/tmp/t/cd.err','w'),text=True)
n=0
def req(method,params=None,timeout=30):
    global n
    n+=1
    m={"jsonrpc":"2.0","id":n,"method":method}
    if params is not None: m["params"]=params
    p.stdin.write(json.dumps(m)+"\n"); p.stdin.flush()
    end=time.time()+timeout
    while time.time()<end:
        r,_,_=select.select([p.stdout],[],[],0.5)
        if r:
            line=p.stdout.readline()
            if not line: return {'eof':True}
            d=json.loads(line)
            if d.get('id')==n: return d
    return {'timeout':method}
t=time.time(); print(str(req('initialize',{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}))[:150], time.time()-t, flush=True)
p.stdin.write(json.dumps({"jsonrpc":"2.0","method":"notifications/initialized"})+"\n"); p.stdin.flush()
def call(name,args,timeout=60):
    t=time.time(); r=req('tools/call',{"name":name,"arguments":args},timeout); print(name, round(time.time()-t,2), str(r)[:300], flush=True); return r
r=call('launch_app',{'name':'gnome-calculator'},timeout=60)
sc=r['result']['structuredContent']; pid=sc['pid']; win=sc['windows'][0]['window_id']
time.sleep(1.5)
call('start_recording',{'output_dir':'/tmp/t/cdrec2'})
for key in ['7','×','6','=']:
    g=call('get_window_state',{'pid':pid,'window_id':win,'include_screenshot':False})
    els=g['result']['structuredContent']['elements']
    e=[e for e in els if (e.get('label') or '').split(' ')[0]==key and e.get('role')=='button']
    if not e: print([(x.get('label'),x.get('role')) for x in els][:40], flush=True)
    print(key, [ (x['label'],x['role']) for x in e][:3], flush=True)
    call('click',{'pid':pid,'element_token':e[0]['element_token']})
    time.sleep(0.6)
call('stop_recording',{})
p.kill()
