"""Which PyTorch 2.11 ops refuse a launch configuration: each candidate in a fresh process."""
import subprocess, sys, time

CANDS = {
 "sdpa-efficient-b70000": "from torch.nn.attention import sdpa_kernel, SDPBackend\nq=torch.randn(70000,1,16,16,device='cuda',dtype=torch.half)\nwith sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION): o=F.scaled_dot_product_attention(q,q,q)\ntorch.cuda.synchronize()",
 "sdpa-flash-b70000": "from torch.nn.attention import sdpa_kernel, SDPBackend\nq=torch.randn(70000,1,16,16,device='cuda',dtype=torch.half)\nwith sdpa_kernel(SDPBackend.FLASH_ATTENTION): o=F.scaled_dot_product_attention(q,q,q)\ntorch.cuda.synchronize()",
 "sdpa-cudnn-b70000": "from torch.nn.attention import sdpa_kernel, SDPBackend\nq=torch.randn(70000,1,16,16,device='cuda',dtype=torch.half)\nwith sdpa_kernel(SDPBackend.CUDNN_ATTENTION): o=F.scaled_dot_product_attention(q,q,q)\ntorch.cuda.synchronize()",
 "sdpa-efficient-h70000": "from torch.nn.attention import sdpa_kernel, SDPBackend\nq=torch.randn(1,70000,16,16,device='cuda',dtype=torch.half)\nwith sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION): o=F.scaled_dot_product_attention(q,q,q)\ntorch.cuda.synchronize()",
 "sdpa-default-b70000": "q=torch.randn(70000,1,16,16,device='cuda',dtype=torch.half)\no=F.scaled_dot_product_attention(q,q,q)\ntorch.cuda.synchronize()",
 "sdpa-efficient-b70000-bwd": "from torch.nn.attention import sdpa_kernel, SDPBackend\nq=torch.randn(70000,1,16,16,device='cuda',dtype=torch.half,requires_grad=True)\nwith sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION): o=F.scaled_dot_product_attention(q,q,q)\no.sum().backward()\ntorch.cuda.synchronize()",
 "interp-nearest-nc70000": "x=torch.randn(70000,1,4,4,device='cuda')\ny=F.interpolate(x,scale_factor=2,mode='nearest')\ntorch.cuda.synchronize()",
 "interp-bilinear-nc70000": "x=torch.randn(70000,1,4,4,device='cuda')\ny=F.interpolate(x,scale_factor=2,mode='bilinear')\ntorch.cuda.synchronize()",
 "interp-bilinear-bwd-nc70000": "x=torch.randn(70000,1,4,4,device='cuda',requires_grad=True)\ny=F.interpolate(x,scale_factor=2,mode='bilinear')\ny.sum().backward()\ntorch.cuda.synchronize()",
 "interp-bicubic-nc70000": "x=torch.randn(70000,1,4,4,device='cuda')\ny=F.interpolate(x,scale_factor=2,mode='bicubic')\ntorch.cuda.synchronize()",
 "interp-trilinear-nc70000": "x=torch.randn(70000,1,2,2,2,device='cuda')\ny=F.interpolate(x,scale_factor=2,mode='trilinear')\ntorch.cuda.synchronize()",
 "interp-nearest3d-nc70000": "x=torch.randn(70000,1,2,2,2,device='cuda')\ny=F.interpolate(x,scale_factor=2,mode='nearest')\ntorch.cuda.synchronize()",
 "adaptive-avg-nc70000": "x=torch.randn(70000,1,8,8,device='cuda')\ny=F.adaptive_avg_pool2d(x,3)\ntorch.cuda.synchronize()",
 "adaptive-max-nc70000": "x=torch.randn(70000,1,8,8,device='cuda')\ny=F.adaptive_max_pool2d(x,3)\ntorch.cuda.synchronize()",
 "adaptive-avg3d-nc70000": "x=torch.randn(70000,1,4,4,4,device='cuda')\ny=F.adaptive_avg_pool3d(x,3)\ntorch.cuda.synchronize()",
 "avgpool3d-nc70000": "x=torch.randn(70000,1,4,4,4,device='cuda')\ny=F.avg_pool3d(x,2)\ntorch.cuda.synchronize()",
 "maxpool3d-nc70000": "x=torch.randn(70000,1,4,4,4,device='cuda')\ny=F.max_pool3d(x,2)\ntorch.cuda.synchronize()",
 "maxpool2d-nc70000": "x=torch.randn(70000,1,8,8,device='cuda')\ny=F.max_pool2d(x,2)\ntorch.cuda.synchronize()",
 "grid-sample-n70000": "x=torch.randn(70000,1,4,4,device='cuda')\ng=torch.zeros(70000,4,4,2,device='cuda')\ny=F.grid_sample(x,g,align_corners=False)\ntorch.cuda.synchronize()",
 "grid-sample3d-n70000": "x=torch.randn(70000,1,2,2,2,device='cuda')\ng=torch.zeros(70000,2,2,2,3,device='cuda')\ny=F.grid_sample(x,g,align_corners=False)\ntorch.cuda.synchronize()",
 "embedding-bag-big": "e=torch.nn.EmbeddingBag(10,4,mode='max').cuda()\ni=torch.zeros(70000*2,dtype=torch.long,device='cuda')\no=torch.arange(0,140000,2,device='cuda')\ny=e(i,o)\ntorch.cuda.synchronize()",
 "topk-rows70000": "x=torch.randn(70000,100,device='cuda')\ny=x.topk(5,dim=1)\ntorch.cuda.synchronize()",
 "sort-rows-huge": "x=torch.randn(2**20,4,device='cuda')\ny=x.sort(dim=1)\ntorch.cuda.synchronize()",
 "unfold-n70000": "x=torch.randn(70000,1,4,4,device='cuda')\ny=F.unfold(x,2)\ntorch.cuda.synchronize()",
 "fold-n70000": "x=torch.randn(70000,4,9,device='cuda')\ny=F.fold(x,(4,4),2)\ntorch.cuda.synchronize()",
 "group-norm-n70000": "x=torch.randn(70000,4,4,device='cuda')\ny=F.group_norm(x,2)\ntorch.cuda.synchronize()",
 "ctc-n70000": "lp=torch.randn(5,70000,4,device='cuda').log_softmax(2)\nt=torch.ones(70000,2,dtype=torch.long,device='cuda')\ny=F.ctc_loss(lp,t,torch.full((70000,),5,dtype=torch.long),torch.full((70000,),2,dtype=torch.long))\ntorch.cuda.synchronize()",
 "reflection-pad-n70000": "x=torch.randn(70000,1,4,4,device='cuda')\ny=F.pad(x,(1,1,1,1),mode='reflect')\ntorch.cuda.synchronize()",
 "replication-pad3d-n70000": "x=torch.randn(70000,1,2,2,2,device='cuda')\ny=F.pad(x,(1,1,1,1,1,1),mode='replicate')\ntorch.cuda.synchronize()",
 "im2col-conv-transpose-n70000": "x=torch.randn(70000,1,4,4,device='cuda')\nw=torch.randn(1,1,3,3,device='cuda')\ntorch.backends.cudnn.enabled=False\ny=F.conv_transpose2d(x,w)\ntorch.cuda.synchronize()",
 "dilated-conv-nocudnn-n70000": "x=torch.randn(70000,1,8,8,device='cuda')\nw=torch.randn(1,1,3,3,device='cuda')\ntorch.backends.cudnn.enabled=False\ny=F.conv2d(x,w,dilation=2)\ntorch.cuda.synchronize()",
 "cdist-b70000": "x=torch.randn(70000,3,2,device='cuda')\ny=torch.cdist(x,x)\ntorch.cuda.synchronize()",
 "multinomial-rows70000": "p=torch.rand(70000,4,device='cuda')\ny=torch.multinomial(p,1)\ntorch.cuda.synchronize()",
 "triton-grid-y70000": "import triton, triton.language as tl\n@triton.jit\ndef kk(p):\n    tl.store(p+tl.program_id(1),1.0)\nx=torch.zeros(70000,device='cuda')\nkk[(1,70000)](x)\ntorch.cuda.synchronize()",
 "cupy-grid-y70000": "import cupy\nk=cupy.RawKernel(r'extern \"C\" __global__ void k(float*p){p[blockIdx.y]=1;}','k')\nx=cupy.zeros(70000,dtype=cupy.float32)\nk((1,70000),(32,),(x,))\ncupy.cuda.Device().synchronize()",
}
PRE = "import torch, torch.nn.functional as F\n"
for name, code in CANDS.items():
    t = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", PRE + code], capture_output=True, text=True, timeout=90)
        err = [l for l in p.stderr.strip().splitlines() if l.strip()]
        msg = " | ".join(err[-3:]) if p.returncode else "ok"
        print(f"{name}: rc={p.returncode} {time.time()-t:.1f}s {msg[:400]}", flush=True)
    except subprocess.TimeoutExpired:
        print(f"{name}: timeout", flush=True)
